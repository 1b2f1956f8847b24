"""The reply format of LLM extraction and its defensive reader (`parse_extraction`): models write LightRAG's
tuple format with stray quotes, other delimiters, markdown, chatter, truncated last records, or answer in JSON
(the JSON variant's schema is here too). A reply that cannot be read costs that reply's records, never the chunk.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.prompts import PROMPTS
from core.schema.graph import ExtractedEntity, ExtractedRelation
from core.text.json_reply import flat_json_objects, read_json

TUPLE_DELIMITER = PROMPTS["extraction_tuple_delimiter"]
RECORD_DELIMITER = PROMPTS["extraction_record_delimiter"]
COMPLETION_DELIMITER = PROMPTS["extraction_completion_delimiter"]

FALLBACK_TYPE = "concept"  # unknown entity types, and endpoints a relation names but no entity record does
MAX_NAME_CHARS = 120
MAX_DESCRIPTION_CHARS = 2000
MAX_ERRORS = 20  # per chunk: enough to see what went wrong without flooding the status message
DEFAULT_STRENGTH = ExtractedRelation.__dataclass_fields__["strength"].default
MAX_LIST_ITEMS = 12  # JSON mode: a small model without a cap repeats records until it runs out of tokens


def extraction_json_schema(entity_types: Sequence[str] | None = None) -> dict[str, Any]:
    """The JSON schema of the JSON variant; with `entity_types`, types are constrained to them (+ concept)."""
    type_schema: dict[str, Any] = {"type": "string", "maxLength": 40}
    if entity_types:
        type_schema = {"type": "string", "enum": _unique([*entity_types, FALLBACK_TYPE])}
    entity = {"type": "object", "additionalProperties": False,
              "properties": {"name": {"type": "string", "maxLength": MAX_NAME_CHARS}, "type": type_schema,
                             "description": {"type": "string", "maxLength": 240}},
              "required": ["name", "type", "description"]}
    relation = {"type": "object", "additionalProperties": False,
                "properties": {"source": {"type": "string", "maxLength": MAX_NAME_CHARS},
                               "target": {"type": "string", "maxLength": MAX_NAME_CHARS},
                               "description": {"type": "string", "maxLength": 240},
                               "keywords": {"type": "string", "maxLength": 100},
                               "strength": {"type": "integer", "minimum": 1, "maximum": 10}},
                "required": ["source", "target", "description", "keywords", "strength"]}
    return {"type": "object", "additionalProperties": False,
            "properties": {"entities": {"type": "array", "items": entity, "maxItems": MAX_LIST_ITEMS},
                           "relationships": {"type": "array", "items": relation, "maxItems": MAX_LIST_ITEMS}},
            "required": ["entities", "relationships"]}


EXTRACTION_JSON_SCHEMA = extraction_json_schema()


@dataclass
class ParsedExtraction:
    entities: list[ExtractedEntity] = field(default_factory=list)
    relations: list[ExtractedRelation] = field(default_factory=list)
    dropped: int = 0
    errors: list[str] = field(default_factory=list)

    def drop(self, reason: str) -> None:
        self.dropped += 1
        self.note(reason)

    def note(self, message: str) -> None:
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(message)

    def merge(self, other: ParsedExtraction) -> int:
        """Add `other`'s records not already here (entities by name, relations by pair, case-insensitive);
        returns how many were new. A record seen again only fills the fields the first one left empty."""
        added = 0
        entities = {e.name.casefold(): e for e in self.entities}
        for e in other.entities:
            known = entities.get(e.name.casefold())
            if known is None:
                entities[e.name.casefold()] = e
                self.entities.append(e)
                added += 1
            else:
                known.description = known.description or e.description
                if known.type == FALLBACK_TYPE and e.type != FALLBACK_TYPE:
                    known.type = e.type
        relations = {_pair_key(r): r for r in self.relations}
        for r in other.relations:
            known = relations.get(_pair_key(r))
            if known is None:
                relations[_pair_key(r)] = r
                self.relations.append(r)
                added += 1
            else:
                known.description = known.description or r.description
                known.keywords = known.keywords or r.keywords
        self.dropped += other.dropped
        for message in other.errors:
            self.note(message)
        return added


def parse_extraction(text: str, entity_types: Iterable[str]) -> ParsedExtraction:
    """The records of one reply, in the tuple format or JSON, whatever the model wrapped them in.

    Never raises. Unusable records are counted in `dropped` with a reason in `errors`; relations whose
    endpoints have no entity record get a "concept" entity for that endpoint, as LightRAG does."""
    parsed = ParsedExtraction()
    parsed.merge(parse_records(text or "", TypeMap(entity_types)))
    add_missing_endpoints(parsed)
    return parsed


def add_missing_endpoints(parsed: ParsedExtraction) -> None:
    names = {e.name.casefold() for e in parsed.entities}
    for r in parsed.relations:
        for endpoint in (r.source, r.target):
            if endpoint.casefold() not in names:
                names.add(endpoint.casefold())
                parsed.entities.append(ExtractedEntity(endpoint, FALLBACK_TYPE, r.description))
                parsed.note(f"relation {r.source!r} - {r.target!r}: {endpoint!r} had no entity record, "
                            f"added as a {FALLBACK_TYPE}")


# --- parsing -------------------------------------------------------------------------------------------------

class TypeMap:
    """Configured entity types, matched case-insensitively (and singular for plural); others are concepts."""

    def __init__(self, entity_types: Iterable[str]):
        self._types = {t.strip().casefold(): t.strip() for t in entity_types if t and t.strip()}

    def __call__(self, raw: str) -> str:
        key = _clean(raw).casefold().replace("_", " ")
        for candidate in (key, key.rstrip("s"), key.replace(" ", "_")):
            if candidate in self._types:
                return self._types[candidate]
        return FALLBACK_TYPE


_ENTITY_KINDS = {"entity", "entities", "node"}
_RELATION_KINDS = {"relationship", "relationships", "relation", "relations", "edge", "rel"}
_IGNORED_KINDS = {"content_keywords", "high_level_keywords", "keywords"}  # LightRAG's summary record
_COMPLETION = re.compile(r"<\s*\|?\s*COMPLETE\s*\|?\s*>?", re.IGNORECASE)
# A record that starts in the middle of a line: `...)("entity"<|>...`
_RECORD_START = re.compile(r"(?=\(\s*[\"'“]?(?:entity|relationship|relation)[\"'”]?\s*(?:<|\||\t|,))", re.IGNORECASE)
# Delimiters, tried in order: the first found in a record is the one it uses.
_DELIMITERS = [
    re.compile(r"\s*<\s*\|\s*>\s*"),  # <|>, < | >
    re.compile(r"\s*<\s*\|\s*#\s*\|\s*>\s*"),  # LightRAG 1.4's <|#|>
    re.compile(r"\s*<\s*SEP\s*>\s*", re.IGNORECASE),
    re.compile(r"\s*\t\s*"),
    re.compile(r"\s*\|\s*"),
    re.compile(r"[\"”]\s*,\s*[\"“]"),  # ("entity", "BERT", "model", "...")
]
_MARKUP = re.compile(r"</?[a-zA-Z][^>]{0,40}>|\*\*|__|`|^#+\s*|^\s*[-*•]\s+")
_ITALIC = re.compile(r"^\*(\S(?:.*\S)?)\*$")
_QUOTES = "\"'“”‘’"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def parse_records(text: str, types: TypeMap) -> ParsedExtraction:
    if _looks_like_json(text):
        parsed = _parse_json(text, types)
        if parsed.entities or parsed.relations or parsed.dropped:
            return parsed
    return _parse_tuples(text, types)


def _parse_tuples(text: str, types: TypeMap) -> ParsedExtraction:
    parsed = ParsedExtraction()
    text = _COMPLETION.sub("\n", text.replace("```", "\n"))
    for line in text.split("\n"):
        for piece in line.split(RECORD_DELIMITER):
            for record in _RECORD_START.split(piece):
                _parse_tuple_record(record, types, parsed)
    return parsed


def _parse_tuple_record(record: str, types: TypeMap, parsed: ParsedExtraction) -> None:
    record = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", record.strip())  # list bullets and numbering
    record = record.strip().strip("`*").strip()
    if not record:
        return
    opened = record.startswith("(")
    if opened:
        record = record[1:]
    record = record.rstrip().rstrip(",;").rstrip()
    if record.endswith(")") and (opened or record.count(")") > record.count("(")):
        record = record[:-1]
    fields = _split_fields(record)
    if fields is None:
        return  # no delimiter: chatter ("Here are the entities:")
    kind = _clean(fields[0]).casefold().strip(_QUOTES + "() ")
    if kind in _ENTITY_KINDS:
        _add_entity(fields[1:], types, parsed, record)
    elif kind in _RELATION_KINDS:
        _add_relation(fields[1:], parsed, record)
    elif kind in _IGNORED_KINDS:
        return
    elif _DELIMITERS[0].search(record) or _DELIMITERS[1].search(record):
        parsed.drop(f"record of unknown kind {kind[:30]!r}: {_excerpt(record)}")
    # a line of chatter that merely contains '|' or a tab is not a record


def _split_fields(record: str) -> list[str] | None:
    for delimiter in _DELIMITERS:
        if delimiter.search(record):
            return delimiter.split(record)
    return None


def _add_entity(fields: list[str], types: TypeMap, parsed: ParsedExtraction, record: str) -> None:
    if len(fields) < 2:  # a name alone is most often the cut-off last record of a truncated reply
        parsed.drop(f"entity record with {len(fields)} of 3 fields: {_excerpt(record)}")
        return
    name = _name(fields[0])
    if not name:
        parsed.drop(f"entity record without a name: {_excerpt(record)}")
        return
    # More fields than 3: the description contained the delimiter.
    parsed.entities.append(ExtractedEntity(name, types(fields[1]), _description(" ".join(fields[2:]))))


def _add_relation(fields: list[str], parsed: ParsedExtraction, record: str) -> None:
    if len(fields) < 3:  # source and target alone: the target may be cut off, and there is nothing to say
        parsed.drop(f"relationship record with {len(fields)} of 5 fields: {_excerpt(record)}")
        return
    source, target = _name(fields[0]), _name(fields[1])
    rest = fields[2:]
    strength = DEFAULT_STRENGTH
    if len(rest) >= 2 and _strength(rest[-1]) is not None:
        strength = _strength(rest[-1])
        rest = rest[:-1]
    elif len(rest) >= 3:
        rest = rest[:-1]  # a strength that is not a number ("high"): the default
    description, keywords = rest[0], ", ".join(rest[1:])
    _keep_relation(parsed, source, target, description, keywords, strength, record)


def _keep_relation(parsed: ParsedExtraction, source: str, target: str, description: Any, keywords: Any,
                   strength: float, record: str) -> None:
    if not source or not target:
        parsed.drop(f"relationship without a {'source' if not source else 'target'}: {_excerpt(record)}")
        return
    if source.casefold() == target.casefold():
        parsed.drop(f"relationship from {source!r} to itself")
        return
    if isinstance(keywords, (list, tuple)):
        keywords = ", ".join(str(k) for k in keywords)
    parsed.relations.append(ExtractedRelation(source, target, _clean(str(keywords or "")),
                                              _description(str(description or "")), strength))


def _strength(raw: Any) -> float | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        value = float(raw)
    else:
        match = _NUMBER.search(_clean(str(raw)))
        if not match or len(_clean(str(raw))) > 20:  # "8", "8/10", "strength: 8" but not a sentence
            return None
        value = float(match.group())
    return min(10.0, max(0.0, value))


def _clean(text: str) -> str:
    text = " ".join(_MARKUP.sub("", text).split())
    return _ITALIC.sub(r"\1", text)  # *model*, but not A* or C*


def _name(raw: Any) -> str:
    name = _clean(str(raw or "")).strip(_QUOTES + " []{}<>.,;:")
    # Parentheses of the record itself, not of the name: "(BERT" and "BERT)" but not "GPT-3 (175B)".
    if name.startswith("(") and name.count("(") > name.count(")"):
        name = name[1:]
    if name.endswith(")") and name.count(")") > name.count("("):
        name = name[:-1]
    name = name.strip(_QUOTES + " ")
    if len(name) > MAX_NAME_CHARS:
        cut = name[:MAX_NAME_CHARS]
        name = cut.rsplit(" ", 1)[0] if " " in cut else cut
    return name


def _description(raw: str) -> str:
    text = _clean(raw).strip(_QUOTES + " ")
    return text[:MAX_DESCRIPTION_CHARS]


def _excerpt(record: str) -> str:
    record = " ".join(record.split())
    return record if len(record) <= 80 else record[:77] + "..."


def _pair_key(r: ExtractedRelation) -> tuple[str, str]:
    a, b = r.source.casefold(), r.target.casefold()
    return (a, b) if a <= b else (b, a)


def _unique(items: Iterable[str]) -> list[str]:
    seen: dict[str, str] = {}
    for item in items:
        seen.setdefault(item.casefold(), item)
    return list(seen.values())


# --- JSON replies ----------------------------------------------------------------------------------------------

_JSON_KEYS = re.compile(r"\"(?:entities|relationships|relations|entity_name|src_id|tgt_id)\"\s*:")


def _looks_like_json(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith(("{", "[", "```json")) or bool(_JSON_KEYS.search(text))


def _parse_json(text: str, types: TypeMap) -> ParsedExtraction:
    data = read_json(text)
    if data is not None:
        return _from_json(data, types)
    # Not valid JSON (most often cut off at the token limit): read every complete flat object.
    objects = flat_json_objects(text)
    parsed = _from_json(objects, types)
    if objects:
        parsed.note("the JSON reply was not complete; its complete records were kept")
    return parsed


def _get(item: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if item.get(key) not in (None, ""):
            return item[key]
    return None


def _from_json(data: Any, types: TypeMap) -> ParsedExtraction:
    parsed = ParsedExtraction()
    if isinstance(data, dict) and not ({"entities", "relationships", "relations", "nodes", "edges"} & data.keys()):
        data = [data]  # a single record
    if isinstance(data, dict):
        entities = _get(data, "entities", "nodes") or []
        relations = _get(data, "relationships", "relations", "edges") or []
        items = [*(entities if isinstance(entities, list) else []), *(relations if isinstance(relations, list) else [])]
    else:
        items = data
    for item in items:
        if not isinstance(item, dict):
            parsed.drop(f"JSON record that is not an object: {_excerpt(json.dumps(item))}")
            continue
        record = _excerpt(json.dumps(item, ensure_ascii=False))
        source = _get(item, "source", "src_id", "src", "source_entity", "head")
        target = _get(item, "target", "tgt_id", "tgt", "target_entity", "tail")
        if source is not None or target is not None:
            strength = _strength(_get(item, "strength", "weight", "relationship_strength"))
            _keep_relation(parsed, _name(source), _name(target),
                           _get(item, "description", "relationship_description"),
                           _get(item, "keywords", "relationship_keywords"),
                           DEFAULT_STRENGTH if strength is None else strength, record)
            continue
        name = _name(_get(item, "name", "entity_name", "entity", "title"))
        if not name:
            parsed.drop(f"JSON entity without a name: {record}")
            continue
        parsed.entities.append(ExtractedEntity(name, types(str(_get(item, "type", "entity_type") or "")),
                                               _description(str(_get(item, "description", "entity_description")
                                                                or ""))))
    return parsed
