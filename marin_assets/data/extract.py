"""HTML to main-content text (resiliparse): a pure, deterministic function for the cleaning job."""

from __future__ import annotations

from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree


def html_to_text(html: str) -> str:
    """Main content only (navigation, headers, footers dropped), with paragraph breaks kept."""
    tree = HTMLTree.parse(html)
    text = extract_plain_text(
        tree,
        preserve_formatting=True,
        main_content=True,
        list_bullets=True,
        alt_texts=False,
        links=False,
        form_fields=False,
        noscript=False,
    )
    return text.strip()
