"""`python -m marin_assets_tests.train_k8s.print_file PATH`: print a file (stands in for the entry)."""

import sys

print(open(sys.argv[1]).read(), end="")
