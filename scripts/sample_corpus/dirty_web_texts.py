"""Hand-written texts for the deliberately dirty sample source (CC0-1.0, written for this repo).

Each group gives one quality filter something real to catch; `CLEAN` is the prose that should
survive every filter.
"""

CLEAN = [
    "The village library opened a new reading room last spring. Volunteers painted the walls a pale green, "
    "carried in donated armchairs, and built shelves along the windows so that the afternoon light falls on "
    "the books. Children come after school to do their homework, and on Thursday evenings a retired teacher "
    "runs a reading group for adults who want to practise their English. The librarian says the room is "
    "busier than she expected, and that the most borrowed books are still detective novels and cookbooks."
    " Next year the library hopes to add a small corner for local history. Anyone with old photographs of the village is invited to lend them for scanning.",
    "Bread needs only four ingredients: flour, water, salt and yeast. The quality of the loaf depends mostly "
    "on time. A slow rise in a cool kitchen lets the yeast produce more flavour, and folding the dough every "
    "half hour builds strength without hard kneading. Bake it in a very hot oven with a tray of water on the "
    "lowest shelf; the steam keeps the crust soft long enough for the bread to expand before it sets."
    " Let the loaf cool completely before slicing it. Cutting warm bread releases steam and leaves the crumb gummy.",
    "Tides are caused mainly by the gravitational pull of the Moon, with a smaller contribution from the Sun. "
    "When the Sun, the Moon and the Earth line up, at new moon and full moon, the two effects add together "
    "and produce spring tides with the largest range. A week later, when the Sun and the Moon pull at right "
    "angles, the range is smallest; these are called neap tides. Local coastlines can amplify the effect."
    " In some bays the difference between high and low water exceeds ten metres. Elsewhere, such as in enclosed seas, the tide is barely noticeable.",
    "Our cycling club meets every Sunday at eight in front of the railway station. The usual route follows the "
    "river for twenty kilometres, climbs through the vineyards and returns along the old canal. Beginners are "
    "welcome, and nobody is left behind: the group waits at the top of every hill. Bring a spare inner tube, "
    "something to drink and a light jacket, because the weather in the valley changes quickly."
    " After the ride most members stay for coffee at the bakery next to the station. New routes are announced there and on the notice board a week in advance.",
    "Version control lets a team work on the same code without overwriting each other's changes. Each commit "
    "records what changed, who changed it and why. Branches allow experiments to proceed in isolation, and a "
    "review before merging catches many mistakes early. Good commit messages explain the reason for a change "
    "rather than repeating the change itself, which helps the person who reads the history years later."
    " Small commits are easier to review than large ones. They also make it simpler to find the change that introduced a bug.",
    "Honeybees communicate the location of food through a waggle dance. A forager returning to the hive runs "
    "a short straight line while shaking her body, then loops back and repeats. The angle of the run relative "
    "to vertical shows the direction of the flowers relative to the Sun, and the length of the waggle phase "
    "indicates the distance. Other bees follow the dancer closely and then fly out to find the source."
    " Researchers decoded this behaviour in the middle of the twentieth century. Since then it has become one of the best studied examples of animal communication.",
    "The museum's new exhibition traces the history of the city's harbour from a fishing village to a modern "
    "container port. Old maps show how the shoreline moved as marshes were drained and quays were built. A "
    "room of photographs documents the dock workers who loaded coffee, timber and grain by hand, and a short "
    "film explains how the arrival of standard shipping containers changed the work within a single decade."
    " The exhibition is open every day except Monday. Entry is free for children and for residents of the city.",
    "Composting turns kitchen scraps and garden waste into a dark, crumbly soil improver. Mix green material, "
    "such as vegetable peelings and grass cuttings, with brown material, such as dry leaves and shredded "
    "cardboard. Keep the heap as damp as a wrung-out sponge and turn it every few weeks to let air in. After "
    "six months to a year the compost is ready, and it smells of a forest floor rather than of rubbish."
    " Avoid adding meat, dairy products or cooked food, which attract pests. Woody stems break down faster if you cut them into short pieces first.",
    "Learning a musical instrument as an adult is slower than as a child, but adults have advantages too. They "
    "can plan their practice, understand the theory behind what they play and choose music they really love. "
    "Teachers recommend short daily sessions instead of a long one at the weekend, recording yourself now and "
    "then, and playing with other people as early as possible, even if the pieces are simple."
    " Progress is rarely steady, and plateaus are normal. Most learners find that a week away from the instrument helps more than it hurts.",
    "The town council has approved a plan to plant four hundred trees along the main roads over the next three "
    "years. The species were chosen to tolerate dry summers and salt on the roads in winter. Residents can "
    "sponsor a tree in front of their house and will receive a watering bag for the first two summers, when "
    "young trees are most at risk. The council expects the streets to be noticeably cooler within a decade."
    " The first trees will be planted this autumn on the road to the hospital. A map on the council website shows the planned locations.",
    "Before a long hike, check the weather forecast and tell someone where you are going and when you expect "
    "to return. Carry a paper map even if your phone has one, since batteries fail in the cold. Pack more "
    "water than you think you will need, a warm layer, and something to eat. Turn back if the path becomes "
    "unsafe; the mountain will still be there next year, and the summit is only halfway through the trip."
    " In winter, start early because the days are short. A head torch weighs very little and can turn an awkward descent into a safe one.",
    "Spreadsheets are often the first database a small business uses. They are flexible and familiar, but "
    "they become fragile as they grow: formulas are copied by hand, columns change meaning and several "
    "versions of the same file circulate by email. Moving the data into a proper database with a defined "
    "schema, even a simple one, usually saves more time than it costs within the first few months."
    " The migration does not have to happen at once. Many teams start by moving the most shared spreadsheet and keep the others until the new system has proved itself.",
]

# Near duplicates: the same text with a few words changed or a sentence added (MinHash should merge them).
NEAR_DUPLICATE_EDITS = [
    (0, "last spring", "last autumn"),
    (0, "pale green", "soft yellow"),
    (2, "smaller contribution", "somewhat smaller contribution"),
    (4, "catches many mistakes early", "catches many mistakes before they reach users"),
    (7, "six months to a year", "nine months to a year"),
]

BOILERPLATE = [
    "Home\nAbout us\nContact\nPrivacy policy\nTerms of use\nWe use cookies to improve your experience. "
    "By continuing to browse you accept our cookie policy.\nAccept all cookies\nSubscribe to our newsletter\n"
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.\n"
    "Copyright 2024 All rights reserved",
    "JavaScript must be enabled in your browser to view this page.\nPlease enable JavaScript and reload.\n"
    "function init() { var x = document.getElementById('menu'); x.style.display = 'none'; }\n"
    "Sign in\nRegister\nForgot password\nShare on Facebook\nShare on Twitter",
    "Skip to main content\nMenu\nSearch\nCart (0)\nLog in\nNews\nSports\nWeather\nBusiness\nCulture\n"
    "Opinion\nVideo\nPodcasts\nNewsletters\nAbout\nCareers\nAdvertise\nContact us\nSitemap\nTerms",
]

SPAM = [
    "BUY NOW!!! CHEAP PILLS!!! BEST PRICE!!! " * 40,
    ("Click here click here click here to win a free phone today only " * 25).strip(),
    "casino bonus casino bonus casino bonus free spins free spins jackpot jackpot jackpot " * 20,
    "\n".join(["Great deals on shoes!"] * 60),
    "$$$ ### @@@ %%% *** !!! ??? ||| ~~~ ^^^ " * 30,
    "\n".join(f"- cheap watches item {i} ..." for i in range(80)),
]

SHORT = ["Hello world.", "Click here", "OK", "Page 2 of 17"]

NON_ENGLISH = [
    "Die Stadtbibliothek hat im Frühjahr einen neuen Lesesaal eröffnet. Freiwillige haben die Wände gestrichen, "
    "Sessel gespendet und Regale entlang der Fenster gebaut, damit das Nachmittagslicht auf die Bücher fällt. "
    "Kinder kommen nach der Schule, um ihre Hausaufgaben zu machen, und donnerstags trifft sich ein Lesekreis.",
    "Le pain ne demande que quatre ingrédients : de la farine, de l'eau, du sel et de la levure. La qualité de "
    "la miche dépend surtout du temps. Une levée lente dans une cuisine fraîche donne plus de goût, et replier "
    "la pâte toutes les demi-heures la rend plus forte sans pétrissage intensif.",
    "Nuestro club de ciclismo se reúne todos los domingos a las ocho delante de la estación de tren. La ruta "
    "habitual sigue el río durante veinte kilómetros, sube entre los viñedos y vuelve por el antiguo canal. "
    "Los principiantes son bienvenidos y nadie se queda atrás.",
    "Городская библиотека открыла новый читальный зал прошлой весной. Волонтёры покрасили стены, принесли "
    "кресла и построили полки вдоль окон, чтобы дневной свет падал на книги. Дети приходят после школы.",
    "村里的图书馆去年春天开了一间新的阅览室。志愿者们粉刷了墙壁，搬来了捐赠的扶手椅，并沿着窗户做了书架。"
    "孩子们放学后来这里写作业，每周四晚上还有一个读书会。",
]

ODD_SHAPES = [
    # Mostly bullet lines (Gopher), mostly ellipsis endings, absurd word lengths, almost no alphabetic words.
    "\n".join(f"• item number {i} in the list" for i in range(30)),
    "\n".join(f"Read more about topic {i}..." for i in range(30)),
    " ".join(["Supercalifragilisticexpialidociousnessfulnesses"] * 60),
    " ".join(str(n * 7919 % 100000) for n in range(300)),
]
