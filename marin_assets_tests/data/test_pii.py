"""PII redaction: e-mails, public IPs and phone numbers replaced; version strings, dates, private IPs kept."""

import pytest

from marin_assets.data.clean.pii import PiiSettingsView, PiiStep, redact

SETTINGS = PiiSettingsView({"email": "<EMAIL>", "ip": "<IP>", "phone": "<PHONE>"})


@pytest.mark.parametrize(
    "text, expected, counts",
    [
        ("Write to jane.doe+lists@example.co.uk today.", "Write to <EMAIL> today.", {"email": 1}),
        ("The resolver at 8.8.8.8. answered.", "The resolver at <IP>. answered.", {"ip": 1}),
        ("Server 93.184.216.34 and 1.1.1.1 are up", "Server <IP> and <IP> are up", {"ip": 2}),
        ("Call +1 415-555-0132 or (650) 253-0000.", "Call <PHONE> or <PHONE>.", {"phone": 2}),
        ("UK office: +44 20 7946 0958", "UK office: <PHONE>", {"phone": 1}),
        ("mail root@203.0.113.9.example.org", "mail <EMAIL>", {"email": 1}),
    ],
)
def test_positive_examples_are_redacted(text, expected, counts):
    assert redact(text, SETTINGS) == (expected, counts)


@pytest.mark.parametrize(
    "text",
    [
        "Install package 1.2.3.4-1 from the archive.",  # a Debian version string, not an IP
        "Upgrade to 10.0.0.1.2 or 2.6.32 today.",  # dotted versions with more or fewer parts
        "Private hosts 192.168.0.1 and 127.0.0.1 are not personal.",  # public_ips_only
        "Released on 2023-01-15, again on 15/01/2023 and 01.02.2024.",  # dates are not phone numbers
        "ISBN 978-0-596-52068-7, build 20230115, port 8080, 3.14159265.",
        "Not an address: user@localhost or @handle.",
    ],
)
def test_negative_examples_are_left_alone(text):
    assert redact(text, SETTINGS) == (text, {})


def test_replacements_are_configurable_and_kinds_can_be_switched_off():
    text = "jane@example.org from 8.8.4.4"
    assert redact(text, PiiSettingsView({"email": "[mail]"})) == ("[mail] from 8.8.4.4", {"email": 1})
    assert redact(text, PiiSettingsView({"ip": "x", "email": "y"}, public_ips_only=False)) == ("y from x", {"email": 1, "ip": 1})
    assert PiiStep(SETTINGS).apply(text).counts == {"pii:email": 1, "pii:ip": 1}


def test_recipe_switch_per_source():
    from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
    from marin_assets.data.curate.curation_steps import build_curation

    shipped = load_cleaning_recipe()
    recipe = shipped.model_copy(update={"pii": shipped.pii.model_copy(update={"sources": {"debian_licenses": False}})})
    assert [s.name for s in build_curation(recipe, "dirty_web").steps] == ["pii"]  # no eval index, no model given
    assert build_curation(recipe, "debian_licenses").steps == []
    assert build_curation(recipe, "dirty_web").run("mail jane@example.org").text == "mail <EMAIL>"


def _shuffled_texts(count: int, seed: int) -> list[str]:
    """Short texts of address-like pieces: e-mail parts, dots, IPs, brackets, spaces, non-ASCII letters."""
    import random

    rng = random.Random(seed)
    pieces = ["a", "b.c", "@", "@@", ".", "-", " ", "\n", "é", "x@y.z", "[1.2.3.4]", "[a:", "]", "_", "é@", "@é",
              "1", "..", "a-", "8.8.8.8", "1.2.3", ".4", "300", "93.184.216.34", "ü"]  # fmt: skip
    return ["".join(rng.choices(pieces, k=rng.randint(1, 15))) for _ in range(count)]


def test_email_search_around_each_at_sign_finds_what_the_regex_finds_over_the_whole_text():
    from marin_assets.data.clean.pii import EMAIL, _email_spans, _regex_spans

    texts = _shuffled_texts(100_000, seed=1)
    texts += ["a@b.c d@e.f", "x.y@z@w.v", "é@a.b a@[1.2.3.4]", "@" * 5 + "a.b"]
    for text in texts:
        assert _email_spans(text) == _regex_spans(text, EMAIL), repr(text)
    assert _email_spans("mail jane@example.org, then bob@example.com") == [(5, 21), (28, 43)]


def test_texts_without_a_dotted_quad_skip_the_ip_regex_and_lose_nothing():
    from marin_assets.data.clean.pii import IPV4, _ip_spans, _regex_spans

    for text in _shuffled_texts(50_000, seed=2):
        assert _ip_spans(text, False) == _regex_spans(text, IPV4), repr(text)
