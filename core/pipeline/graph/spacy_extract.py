"""LLM-free entity and relation extraction with spaCy: GraphRAG's "fast" indexing idea, fitted to papers.

A chunk is cut into units of clean text (core/pipeline/graph/spacy_text.py), run through the spaCy pipeline
(core/models/nlp.py) and read sentence by sentence for entity mentions: noun phrases, acronyms with their
definitions, a byline's people and organisations (core/pipeline/graph/spacy_mentions.py). Here the mentions become
the chunk's entities: an acronym defined in the chunk absorbs the chunk's mentions of its long form, and its
description starts with that long form; a single common noun is kept only when it names a metric, task or field
or comes back in the chunk; types are voted from the mentions' rules, restricted to the configured entity types.
Relations are co-occurrences in one sentence between its best entities, keyed by the verbs between the two,
described by the sentence. Reference-list chunks are skipped: names and titles, no relations.

The records are those of the LLM extractor, so merging, communities and search work on either. English only (the
one spaCy model that ships offline). Deterministic. About 10,000 words per CPU-second here: tok2vec, tagger and
sentence splitter run batched with `nlp.pipe`; lemmas are computed only for the words that need one.
"""
from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator, Sequence

from core.models.nlp import Lexicon, lexicon
from core.pipeline.graph import spacy_words as W
from core.pipeline.graph.spacy_mentions import Mention, Sentence, SentenceReader, entity_key
from core.pipeline.graph.spacy_text import ROW, chunk_units, is_references_section, letter_count, sentence_spans
from core.schema.graph import ChunkExtraction, ExtractedEntity, ExtractedRelation
from core.schema.records import Chunk
from core.settings.config import GraphConfig

log = logging.getLogger(__name__)

DESCRIPTION_CHARS = 300
CHUNKS_PER_BATCH = 32


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

    def __init__(self, config: GraphConfig | None = None, *, max_entities: int = 30, max_per_sentence: int = 8,
                 pair_window: int = 2, skip_references: bool = True, byline_ner: bool = True, batch_size: int = 64):
        self.config = config or GraphConfig()
        self.entity_types = {t.strip().lower() for t in self.config.entity_types if t.strip()}
        self.max_entities = max_entities  # per chunk, the best by frequency, shape and type (an LLM gives 10-30)
        self.max_per_sentence = max_per_sentence
        self.pair_window = pair_window
        self.skip_references = skip_references
        self.byline_ner = byline_ner  # people and organisations of a paper's first chunk
        self.batch_size = batch_size

    def extract(self, chunks: Sequence[Chunk]) -> Iterator[ChunkExtraction]:
        chunks = list(chunks)
        for first in range(0, len(chunks), CHUNKS_PER_BATCH):
            yield from self._extract_batch(chunks[first:first + CHUNKS_PER_BATCH])

    # --- work

    def _extract_batch(self, chunks: list[Chunk]) -> list[ChunkExtraction]:
        lex = lexicon()
        units: list[tuple[int, str, str]] = []  # (chunk position, text, mode)
        errors: dict[int, str] = {}
        for n, chunk in enumerate(chunks):
            if self.skip_references and is_references_section(chunk.section):
                continue
            try:
                units.extend((n, text, mode) for text, mode in chunk_units(chunk))
            except Exception as exc:  # a chunk we cannot read must not stop the others
                errors[n] = f"spaCy could not read the chunk: {exc}"
        docs = self._pipe([text for _, text, _ in units])
        per_chunk: dict[int, list[tuple[object, str]]] = {}
        for (n, _, mode), doc in zip(units, docs):
            per_chunk.setdefault(n, []).append((doc, mode))
        out = []
        for n, chunk in enumerate(chunks):
            result = ChunkExtraction(chunk_id=chunk.id, extractor=self.name)
            if n in errors:
                result.errors.append(errors[n])
            else:
                try:
                    self._fill(result, chunk, per_chunk.get(n, []), lex)
                except Exception as exc:  # never raise for one chunk: say why it is empty
                    log.exception("spaCy extraction failed on chunk %s", chunk.id)
                    result = ChunkExtraction(chunk_id=chunk.id, extractor=self.name, errors=[f"spaCy: {exc}"])
            out.append(result)
        return out

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

    def _fill(self, result: ChunkExtraction, chunk: Chunk, docs: list[tuple[object, str]], lex: Lexicon) -> None:
        if not docs:
            return
        byline = self.byline_ner and chunk.index == 0 and chunk.kind == "text"
        if byline:
            tagged = list(lex.ner.pipe([d for d, _ in docs]))
            docs = list(zip(tagged, [mode for _, mode in docs]))
        caption, header = "", None
        sentences: list[Sentence] = []
        for doc, mode in docs:
            names = [e for e in doc.ents if e.label_ in ("PERSON", "ORG")] if byline else []
            for start, end in sentence_spans(doc, mode):
                text = doc[start:end].text.strip()
                if letter_count(text) < 2:
                    continue
                reader = SentenceReader(lex, doc, start, end, mode)
                mentions = reader.mentions(names)
                sentence = Sentence(text=text, mentions=mentions, verbs=reader.verbs(mentions), row=mode == ROW)
                if mode == ROW:
                    # A row's entities relate to each other and to its column headers (a model to a dataset).
                    row = text.replace(" ; ", " | ")
                    if header is None:
                        header = sentence
                        sentence.text = f"{caption} Columns: {row}." if caption else f"Columns: {row}."
                    else:
                        sentence.header = header.mentions
                        sentence.text = f"{caption} {header.text.removeprefix(caption).strip()} Row: {row}".strip()
                elif chunk.kind == "table" and not caption:
                    caption = _cap(text, 150)
                sentences.append(sentence)
        self._assemble(result, sentences)

    def _assemble(self, result: ChunkExtraction, sentences: list[Sentence]) -> None:
        mentions = [m for s in sentences for m in s.mentions]
        # An acronym defined anywhere in the chunk absorbs the chunk's mentions of its long form.
        aliases: dict[str, str] = {}
        acronym_names: dict[str, str] = {}
        for m in mentions:
            if m.alias and m.key not in aliases:
                aliases[m.key], acronym_names[m.key] = m.alias, m.name
        long_to_short = {entity_key(long): short for short, long in aliases.items()}
        for m in mentions:
            if not m.alias and m.key in long_to_short:
                m.key = long_to_short[m.key]
                m.name = acronym_names[m.key]

        counts: Counter[str] = Counter(m.key for m in mentions)
        spellings: dict[str, Counter[str]] = {}
        votes: dict[str, list[str]] = {}
        plain: dict[str, bool] = {}
        for m in mentions:
            spellings.setdefault(m.key, Counter())[m.name] += 1
            votes.setdefault(m.key, []).extend(m.types)
            plain[m.key] = plain.get(m.key, True) and m.plain
        types = {k: self._allowed(W.pick_type(v)) for k, v in votes.items()}
        names = {k: max(c, key=lambda n: (c[n], -list(c).index(n))) for k, c in spellings.items()}
        first_seen = {}
        for n, m in enumerate(mentions):
            first_seen.setdefault(m.key, n)
        # One common word is kept when it names a metric, task or field ("accuracy", "summarization"), or when
        # the chunk comes back to it: "representation" said once is not an entity.
        kept = [k for k in counts if k and (not plain[k] or types[k] in ("metric", "task", "field") or counts[k] >= 2)]

        def score(k: str) -> float:
            named = any(c.isupper() for c in names[k])
            return (counts[k] + 1.5 * named + 0.5 * (" " in k) + 1.0 * (types[k] != "concept")
                    + 1.0 * (k in aliases))

        ranked = sorted(kept, key=lambda k: (-score(k), first_seen[k], k))[:self.max_entities]
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

    def _allowed(self, kind: str) -> str:
        return kind if kind in self.entity_types else "concept"


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
