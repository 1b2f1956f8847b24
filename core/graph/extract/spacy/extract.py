"""LLM-free entity and relation extraction with spaCy: GraphRAG's "fast" indexing idea, fitted to papers.

A paper's chunks are read together. Each is cut into units of clean text (core/graph/extract/spacy/text.py,
text_clean.py) without what parsing says is not prose (the title, reference entries, page furniture: item_roles.py;
the author block gives only its people and organisations), run through the spaCy pipeline (core/models/nlp.py) and
read sentence by sentence for entity mentions: noun phrases, acronyms with their definitions, a byline's people and
organisations (core/graph/extract/spacy/mentions.py). Then, over the whole paper: an acronym defined anywhere
absorbs the paper's mentions of its long form (the paper-wide evidence: evidence.py); a candidate is kept
only if it is a term (core/graph/extract/terms.py: how rare its words are in general English, how often the paper
comes back to it, whether it is a name, a definition or in a caption, whether prose names it or only table cells
do); types are voted from all its mentions, the lexicon and the words around a name
(entity_types.py) — outside computer science from the cues of the paper's field, told by its venue and words
(core/graph/fields.py: genes, diseases, chemicals, organisms, materials …) — restricted to the configured entity
types. Relations are co-occurrences in one sentence between
its best entities, keyed by the verbs between the two, described by the sentence. Reference-list and
acknowledgement chunks are skipped.

The records are those of the LLM extractor, so merging, communities and search work on either. English only (the
one spaCy model that ships offline). Deterministic for a given set of chunks of a paper (the graph stage passes
all of a paper's chunks at once). About 10,000 words per CPU-second here: tok2vec, tagger and sentence splitter
run batched with `nlp.pipe`; lemmas are computed only for the words that need one.
"""
from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence

from core.content.items import item_text
from core.graph.extract.name_spans import name_spans
from core.graph.extract.spacy.evidence import read_paper
from core.graph.extract.spacy.mentions import SentenceReader
from core.graph.extract.spacy.paper import Paper
from core.graph.extract.spacy.records import Mention, Sentence, entity_key
from core.graph.extract.spacy.text import (
    BYLINE,
    FRAGMENTS,
    PROSE,
    ROW,
    chunk_units,
    is_references_section,
    is_skipped_section,
    letter_count,
    not_prose,
    reference_entry,
    sentence_spans,
)
from core.graph.extract.terms import FIELD_TYPES
from core.graph.fields import Field, detect_field, field_of
from core.graph.item_roles import item_roles
from core.models.nlp import Lexicon, lexicon
from core.schema.graph import ChunkExtraction, ExtractedEntity, ExtractedRelation
from core.schema.records import Chunk, ContentItem
from core.settings.config import GraphConfig

log = logging.getLogger(__name__)

DESCRIPTION_CHARS = 300
CHUNKS_PER_BATCH = 32
ItemsOf = Callable[[str], list[ContentItem]]  # doc id → its parsed items
VenueOf = Callable[[str], str]  # doc id → its venue ("" when unknown)
# Item roles (item_roles.py) never read for entities: a heading's terms are in its section, and headings in capitals
# or title case are where the phrase finder errs most ("DESIGNING AI SUPPORTS FOR EXPOSITORY WRITING").
_NOT_PROSE = {"title", "reference", "furniture", "heading"}
_ABSTRACT = re.compile(r"^\W*(abstract|summary)\b", re.I)
# A table written out as "key: value; key: value" ("Model: GrobidNN; P: 42.0; Full R: 36.5"): cells, not prose.
_KEY_VALUES = re.compile(r"(?:[^:;]{1,60}: [^:;]{0,40}; ){2}")


def _cap(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[:cut.rfind(" ")]
    return cut.rstrip(" ,;:") + "…"


def _join_capped(parts: Sequence[str], limit: int) -> str:
    """Whole parts while they fit, then the next one cut if there is room for a useful piece of it."""
    out = ""
    for part in parts:
        part = " ".join(part.split())
        if not part or part in out:
            continue
        candidate = f"{out} {part}".strip()
        if len(candidate) <= limit:
            out = candidate
            continue
        room = limit - len(out) - 1
        if room >= 60 or not out:
            out = f"{out} {_cap(part, room if out else limit)}".strip()
        break
    return out


class SpacyExtractor:
    """Extractor without an LLM: one ChunkExtraction per chunk, in the chunks' order, deterministic."""

    name = "spacy"
    reads_many_papers = True  # the graph stage hands it papers in batches (core.pipeline.graph.batch)

    def __init__(self, config: GraphConfig | None = None, *, items_of: ItemsOf | None = None, max_entities: int = 30,
                 max_per_sentence: int = 8, pair_window: int = 2, skip_references: bool = True,
                 byline_ner: bool = True, batch_size: int = 64, venue_of: VenueOf | None = None):
        self.config = config or GraphConfig()
        self.entity_types = {t.strip().lower() for t in self.config.entity_types if t.strip()}
        # A paper's parsed items (core/content/pages.load_items): which paragraphs are its title, byline,
        # references or page furniture. Without it, the first chunk's byline is found by the NER alone.
        self.items_of = items_of
        self.max_entities = max_entities  # per chunk, the best by frequency, shape and type (an LLM gives 10-30)
        self.max_per_sentence = max_per_sentence
        self.pair_window = pair_window
        self.skip_references = skip_references
        self.byline_ner = byline_ner  # people and organisations of a paper's byline
        self.batch_size = batch_size
        # A paper's venue (its metadata): with its vocabulary, which field's types and cues apply
        # (core/graph/fields.py). Without it, the vocabulary alone decides.
        self.venue_of = venue_of
        self.fields: dict[str, str] = {}  # doc id → the field its last extraction used

    def extract(self, chunks: Sequence[Chunk]) -> Iterator[ChunkExtraction]:
        """A paper's chunks are read together (the term filter counts mentions over the paper); many papers' chunks
        go through spaCy in shared batches (a short document alone would be a batch of two or three units); the
        records come out in the chunks' order."""
        chunks = list(chunks)
        papers: dict[str, list[int]] = {}
        for n, chunk in enumerate(chunks):
            papers.setdefault(chunk.doc_id, []).append(n)
        roles = {doc_id: self._roles(doc_id) for doc_id in papers}
        order = [n for positions in papers.values() for n in positions]
        sentences: dict[int, list[Sentence] | None] = {}
        errors: dict[int, str] = {}
        for first in range(0, len(order), CHUNKS_PER_BATCH):
            self._read_batch(chunks, order[first:first + CHUNKS_PER_BATCH], roles, sentences, errors)
        out: dict[int, ChunkExtraction] = {}
        for doc_id, positions in papers.items():
            field = field_of(self._field([chunks[n] for n in positions], doc_id))
            self.fields[doc_id] = field.name
            paper = read_paper([chunks[n] for n in positions], [sentences[n] for n in positions], field,
                               self._allowed)
            for n in positions:
                result = out[n] = ChunkExtraction(chunk_id=chunks[n].id, extractor=self.name)
                if n in errors:
                    result.errors.append(errors[n])
                elif sentences[n]:
                    self._assemble(result, sentences[n], paper)
                    result.phrases = _phrases(sentences[n], chunks[n].text)
        for n in range(len(chunks)):
            yield out[n]

    # --- work

    def _field(self, chunks: list[Chunk], doc_id: str) -> str:
        venue = ""
        if self.venue_of is not None:
            try:
                venue = self.venue_of(doc_id) or ""
            except Exception as exc:  # no metadata: the vocabulary decides
                log.warning("venue of %s unavailable: %s", doc_id, exc)
        return detect_field(" ".join(c.text for c in chunks), venue)

    def _roles(self, doc_id: str) -> tuple[dict[int, ContentItem], dict[int, str]]:
        if self.items_of is None:
            return {}, {}
        try:
            items = self.items_of(doc_id)
        except Exception as exc:  # no content list: read the chunks without roles
            log.warning("items of %s unavailable: %s", doc_id, exc)
            return {}, {}
        return {i.index: i for i in items}, item_roles(items) if items else {}

    def _read_batch(self, chunks: list[Chunk], batch: list[int], roles: dict[str, tuple[dict, dict]],
                    sentences: dict[int, list[Sentence] | None], errors: dict[int, str]) -> None:
        """The sentences and mentions of these chunks (positions in `chunks`), their units in one spaCy batch."""
        lex = lexicon()
        units: list[tuple[int, str, str]] = []  # (chunk position, text, mode)
        for n in batch:
            try:
                units.extend((n, text, mode) for text, mode in self._units(chunks[n], *roles[chunks[n].doc_id]))
            except Exception as exc:  # a chunk we cannot read must not stop the others
                errors[n] = f"spaCy could not read the chunk: {exc}"
        docs = self._pipe([text for _, text, _ in units])
        per_chunk: dict[int, list[tuple[object, str]]] = {}
        for (n, _, mode), doc in zip(units, docs):
            per_chunk.setdefault(n, []).append((doc, mode))
        for n in batch:
            try:
                sentences[n] = self._read(chunks[n], per_chunk.get(n, []), lex,
                                          fallback_byline=not roles[chunks[n].doc_id][1])
            except Exception as exc:  # never raise for one chunk: say why it is empty
                log.exception("spaCy extraction failed on chunk %s", chunks[n].id)
                errors[n] = f"spaCy: {exc}"
                sentences[n] = None

    def _units(self, chunk: Chunk, items: dict[int, ContentItem], roles: dict[int, str]) -> list[tuple[str, str]]:
        if self.skip_references and (is_references_section(chunk.section) or is_skipped_section(chunk.section)):
            return []
        if not roles or chunk.kind != "text":
            return chunk_units(chunk)
        chunk_items = [items[i] for i in chunk.item_indices if i in items]
        skipped = [item_text(i) for i in chunk_items if roles.get(i.index) in _NOT_PROSE]
        byline = [item_text(i) for i in chunk_items if roles.get(i.index) == "front"] if self.byline_ner else []
        return chunk_units(chunk, skipped, byline)

    def _pipe(self, texts: list[str]) -> list:
        nlp = lexicon().nlp
        try:
            return list(nlp.pipe(texts, batch_size=self.batch_size))
        except Exception as exc:  # spaCy does not fail on text, but one bad unit must not cost the batch
            log.warning("spaCy failed on a batch, retrying unit by unit: %s", exc)
            out = []
            for text in texts:
                try:
                    out.append(nlp(text))
                except Exception:
                    out.append(nlp(""))
            return out

    def _read(self, chunk: Chunk, docs: list[tuple[object, str]], lex: Lexicon, fallback_byline: bool
              ) -> list[Sentence]:
        """The chunk's sentences with their mentions."""
        if not docs:
            return []
        whole = self.byline_ner and fallback_byline and chunk.index == 0 and chunk.kind == "text"
        ner = [whole or mode == BYLINE for _, mode in docs]
        if any(ner):
            tagged = iter(lex.ner.pipe([d for (d, _), yes in zip(docs, ner) if yes]))
            docs = [(next(tagged) if yes else d, mode) for (d, mode), yes in zip(docs, ner)]
        caption, header = "", None
        abstract = bool(_ABSTRACT.match(chunk.section or ""))
        sentences: list[Sentence] = []
        for (doc, mode), tagged_doc in zip(docs, ner):
            names = [e for e in doc.ents if e.label_ in ("PERSON", "ORG")] if tagged_doc else []
            read_as = PROSE if mode == BYLINE else mode
            for start, end in sentence_spans(doc, read_as):
                text = doc[start:end].text.strip()
                if letter_count(text) < 2 or not_prose(text):
                    continue
                reader = SentenceReader(lex, doc, start, end, read_as)
                mentions = reader.mentions(names)
                if mode == BYLINE:  # an author block: its people and organisations, nothing else
                    mentions = [m for m in mentions if m.types[:1] in (["person"], ["organization"])]
                cells = mode != ROW and _KEY_VALUES.search(text) is not None
                label_end = _first_cell_end(doc, start, end) if cells else -1
                sentence = Sentence(text=text, mentions=mentions, verbs=reader.verbs(mentions),
                                    row=mode == ROW or cells, label_end=label_end,
                                    fragments=mode == FRAGMENTS, highlighted=abstract,
                                    cited=reference_entry(text))
                if mode == ROW:
                    # A row's entities relate to each other and to its column headers (a model to a dataset).
                    row = text.replace(" ; ", " | ")
                    if header is None:
                        header = sentence
                        sentence.highlighted = True
                        sentence.text = f"{caption} Columns: {row}." if caption else f"Columns: {row}."
                    else:
                        sentence.header = header.mentions
                        sentence.label_end = _first_cell_end(doc, start, end)
                        sentence.text = f"{caption} {header.text.removeprefix(caption).strip()} Row: {row}".strip()
                elif chunk.kind != "text" and mode == PROSE:
                    sentence.highlighted = True  # a caption
                    if chunk.kind == "table" and not caption:
                        caption = _cap(text, 150)
                sentences.append(sentence)
        return sentences

    def _assemble(self, result: ChunkExtraction, sentences: list[Sentence], paper: Paper) -> None:
        sentences = [s for s in sentences if not s.cited]  # a reference entry describes and relates nothing
        mentions = [m for s in sentences for m in s.mentions if m.key in paper.terms]
        counts: Counter[str] = Counter(m.key for m in mentions)
        first_seen: dict[str, int] = {}
        for n, m in enumerate(mentions):
            first_seen.setdefault(m.key, n)
        types, names, aliases = paper.terms, paper.names, paper.aliases

        def score(k: str) -> float:
            return (counts[k] + 0.2 * paper.counts[k] + 1.5 * paper.named[k] + 0.5 * (" " in k)
                    + 1.0 * (types[k] != "concept") + 1.0 * (k in aliases))

        ranked = sorted(counts, key=lambda k: (-score(k), first_seen[k], k))[:self.max_entities]
        rank = {k: n for n, k in enumerate(ranked)}
        for k in sorted(ranked, key=lambda k: first_seen[k]):
            texts = [s.text for s in sentences if any(m.key == k for m in s.mentions)]
            alias = [f"{names[k]} ({aliases[k]})."] if k in aliases else []
            result.entities.append(ExtractedEntity(name=names[k], type=types[k],
                                                   description=_join_capped(alias + texts, DESCRIPTION_CHARS)))

        pairs: dict[tuple[str, str], dict] = {}

        def relate(a: Mention, b: Mention, sentence: Sentence, keywords: list[str]) -> None:
            if a.key == b.key:
                return
            entry = pairs.setdefault(tuple(sorted((a.key, b.key))), {
                "source": a.key, "target": b.key, "keywords": [], "sentences": [], "count": 0})
            entry["count"] += 1
            entry["sentences"].append(sentence.text)
            entry["keywords"].extend(k for k in keywords if k not in entry["keywords"])

        for s in sentences:
            best = self._best(s.mentions, rank)
            for i, a in enumerate(best):
                # The next two entities of the sentence only ("A improves B on C": A—B, A—C, B—C; a sentence of
                # eight entities gives 13 pairs, not 28): entities far apart in a long sentence are rarely
                # related, and every pair is a relation vector to embed, the graph stage's largest cost.
                for b in best[i + 1:i + 1 + self.pair_window]:
                    relate(a, b, s, _keywords(s, a, b))
            for a in best:
                for h in self._best(s.header, rank):
                    relate(a, h, s, ["table column"])
        for entry in pairs.values():
            keywords = [k for k in entry["keywords"] if k != "co-occurrence"] or ["co-occurrence"]
            result.relations.append(ExtractedRelation(
                source=names[entry["source"]], target=names[entry["target"]], keywords=", ".join(keywords[:4]),
                description=_join_capped(entry["sentences"], DESCRIPTION_CHARS), strength=float(entry["count"])))

    def _best(self, mentions: list[Mention], rank: dict[str, int]) -> list[Mention]:
        """A sentence's kept entities, once each, the best few (pairs grow with the square), in text order."""
        present: dict[str, Mention] = {}
        for m in mentions:
            if m.key in rank:
                present.setdefault(m.key, m)
        best = sorted(present.values(), key=lambda m: rank[m.key])[:self.max_per_sentence]
        return sorted(best, key=lambda m: m.start)

    def _allowed(self, kind: str, field: Field | None = None) -> str:
        """The configured types only; a field's own types too while the configuration names none of the fields'
        types (settings written before fields existed list the computer-science ones)."""
        if (field is not None and not field.is_cs and kind in field.types
                and not self.entity_types & FIELD_TYPES):
            return kind
        return kind if kind in self.entity_types else "concept"


def _phrases(sentences: list[Sentence], text: str) -> list[str]:
    """For retrieval only (ChunkExtraction.phrases): every candidate's key after the paper-wide acronym and
    footnote merges, terms or not, then the capitalised names of the chunk's text (name_spans.py: a title line,
    a name the tagger cut in two)."""
    keys = [m.key for s in sentences if not s.fragments for m in s.mentions]
    keys += [entity_key(span) for span in name_spans(text)]
    return list(dict.fromkeys(k for k in keys if k and any(c.isalnum() for c in k)))


def _first_cell_end(doc, start: int, end: int) -> int:
    """Where a row's first cell ("BERT-base", "Model: GrobidNN") ends: the item the row is about."""
    return next((t.i for t in doc[start:end] if t.text == ";"), end)


def _keywords(sentence: Sentence, a: Mention, b: Mention) -> list[str]:
    """The verbs between two mentions; else the sentence's first verb; else "co-occurrence"."""
    if sentence.row:
        return ["table row"]
    between = [v for i, v in sentence.verbs if a.end <= i < b.start]
    if between:
        return between[:3]
    if sentence.verbs:
        return [sentence.verbs[0][1]]
    return ["co-occurrence"]
