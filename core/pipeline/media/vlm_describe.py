"""One VLM call per item: a context-aware prompt per item type, the image as a data URL, a JSON reply
{description, entities} read defensively (models wrap JSON in prose or fences, truncate it, or ignore it)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from core.content.media_items import kind_name
from core.models.vlm import image_part, text_part
from core.prompts import PROMPTS
from core.schema.media import MediaEntity
from core.schema.records import ContentItem
from core.text.json_reply import read_first_object
from core.text.tables import table_text

PURPOSE = "describe_media"
MAX_ENTITIES = 12
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)
_DESCRIPTION_FIELD = re.compile(r'"description"\s*:\s*"((?:[^"\\]|\\.)*)', re.DOTALL)


@dataclass
class VLMRequest:
    item: ContentItem
    label: str
    paper_title: str
    png: bytes
    context: str
    inner_text: str = ""  # text the parser or OCR found inside the item's box


@dataclass
class ParsedReply:
    description: str
    entities: list[MediaEntity] = field(default_factory=list)
    message: str = ""  # set when the reply was not clean JSON: what was kept


def _content(req: VLMRequest) -> tuple[str, str]:
    item = req.item
    if item.type == "table":
        text = table_text(item.table_body) if item.table_body else (req.inner_text or "(none)")
        return "Table content as parsed", text
    if item.type == "equation":
        return "Equation text as parsed", (item.text or req.inner_text or "(none)")
    return "Text found inside the figure", (req.inner_text or str(item.extra.get("content") or "") or "(none)")


def build_messages(req: VLMRequest, entity_types: list[str], language: str = "English",
                   max_words: int = 200) -> list[dict]:
    kind = kind_name(req.item.type).lower()
    focus_key = {"table": "media_description_focus_table", "equation": "media_description_focus_equation"}.get(
        req.item.type, "media_description_focus_figure")
    system = PROMPTS["media_description_system"].format(kind=kind, language=language, focus=PROMPTS[focus_key],
                                                        max_words=max_words, entity_types=", ".join(entity_types))
    content_name, content = _content(req)
    user = PROMPTS["media_description_user"].format(
        paper=req.paper_title or "(untitled)", label=req.label, page=req.item.page_idx + 1,
        caption=req.item.caption or "(none)", footnote=req.item.footnote or "(none)", content_name=content_name,
        content=content[:6000], context=req.context or "(none)", kind=kind)
    return [{"role": "system", "content": system},
            {"role": "user", "content": [text_part(user), image_part(req.png)]}]


def _entities(raw) -> tuple[list[MediaEntity], int]:
    out, dropped = [], 0
    for e in raw if isinstance(raw, list) else []:
        if isinstance(e, str) and e.strip():
            out.append(MediaEntity(name=e.strip()[:120], type="concept"))
        elif isinstance(e, dict) and str(e.get("name") or "").strip():
            out.append(MediaEntity(name=str(e["name"]).strip()[:120],
                                   type=str(e.get("type") or "concept").strip().lower()[:40] or "concept",
                                   description=str(e.get("description") or "").strip()[:500]))
        else:
            dropped += 1
    return out[:MAX_ENTITIES], dropped + max(0, len(out) - MAX_ENTITIES)


def parse_reply(text: str) -> ParsedReply:
    """{description, entities} from a VLM reply. Broken JSON keeps what is usable: the description field
    when it can be cut out, else the reply's prose; the message says what happened."""
    text = (text or "").strip()
    cleaned = _FENCE.sub("", text).strip()
    data = read_first_object(cleaned)
    if data is not None:
        description = str(data.get("description") or "").strip()
        entities, dropped = _entities(data.get("entities"))
        message = f"{dropped} malformed entities dropped" if dropped else ""
        if not description:
            return ParsedReply("", entities, "the VLM's JSON had no description")
        return ParsedReply(description, entities, message)
    m = _DESCRIPTION_FIELD.search(cleaned)
    if m:  # truncated JSON (max tokens reached): the description up to where the reply stopped
        raw = m.group(1)
        try:
            description = json.loads(f'"{raw}"')
        except json.JSONDecodeError:
            description = raw.replace('\\"', '"').replace("\\n", "\n")
        return ParsedReply(description.strip(), [], "the VLM's JSON was cut off: its description is kept, its "
                                                    "entities are lost")
    if cleaned and not cleaned.startswith(("{", "[")):
        return ParsedReply(cleaned[:3000], [], "the VLM answered in prose, not JSON: its text is kept as the "
                                               "description, with no entities")
    return ParsedReply("", [], "the VLM's reply could not be read (broken JSON, no description)")
