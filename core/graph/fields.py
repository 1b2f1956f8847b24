"""Fields of research and their entity types: the field-aware schema of the graph.

A paper belongs to one field — computer science (`cs`, the schema the graph was first tuned on), the life sciences and
medicine (`life`), or the physical sciences (`physical`) — told by its venue and its vocabulary (`detect_field`).
Each field is data, one JSON file under core/graph/data/fields/ (docs/tuning.md, Fields, says how they were written and
regenerated): the types it adds to the graph and their cues — head nouns, suffixes of rare words, whole words, the
words around a name — plus what the computer-science rules' votes become in it and the words never typed there. The
LLM-free extractor (core/graph/extract/spacy/extract.py) types a paper's terms with its field's cues and no other's,
so "patient" is never a method and "BERT" never a gene; the LLM extractor asks for the field's types
(core/graph/extract/llm/extract.py)."""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from wordfreq import zipf_frequency

DATA = Path(__file__).parent / "data" / "fields"
CS, LIFE, PHYSICAL = "cs", "life", "physical"
# Types every field has (the computer-science schema's general part).
GENERAL_TYPES = ("method", "metric", "dataset", "software", "person", "organization", "field", "concept")

# A chemical formula: element symbols with counts, two elements at least or one with a count ("NaCl", "H2O2",
# "SiO2", "CO2", "Al2O3", "Fe3O4"; not "CT", "PCR", "NO").
_ELEMENT = (r"(?:H|D|He|Li|Be|B|C|N|O|F|Ne|Na|Mg|Al|Si|P|S|Cl|Ar|K|Ca|Sc|Ti|V|Cr|Mn|Fe|Co|Ni|Cu|Zn|Ga|Ge|As|Se|Br|"
            r"Kr|Rb|Sr|Y|Zr|Nb|Mo|Ru|Rh|Pd|Ag|Cd|In|Sn|Sb|Te|I|Xe|Cs|Ba|La|Ce|Pr|Nd|Sm|Eu|Gd|Tb|Dy|Ho|Er|Tm|Yb|Lu|Hf|"
            r"Ta|W|Re|Os|Ir|Pt|Au|Hg|Tl|Pb|Bi|U)")
FORMULA = re.compile(rf"(?:{_ELEMENT}(?:\d+(?:\.\d+)?|[xyδ])?){{2,6}}(?:[+-]|[₀-₉]*)")
_FORMULA_COUNT = re.compile(r"\d|[A-Z][a-z]")  # a count or a two-letter element: not "OS", "IC", "BPC"
# A binomial: a Genus capitalised and a species in lower case ("Escherichia coli", "Deinococcus radiodurans"), or the
# genus cut to its initial ("E. coli", "D. radiodurans").
BINOMIAL = re.compile(r"(?:[A-Z][a-z]{3,}|[A-Z]\.)\s[a-z]{3,}")
# Gene and protein symbols: "TP53", "BRCA1", "CD4", "IL-6", "EF-1A", "TNF-α", "p53", "p21", "Dps", "RecA", "LacZ".
_GENE_SHAPES = (re.compile(r"[A-Z][A-Z0-9]{1,6}\d[A-Z]{0,2}"), re.compile(r"[A-Z]{2,5}-\d{1,3}[A-Za-zα-ω]?"),
                re.compile(r"[A-Z]{2,5}-?(?:[αβγδκ]|alpha|beta|gamma|delta|kappa)"), re.compile(r"p\d{2,3}"))
_GREEK = {"alpha": "A", "beta": "B", "gamma": "G", "delta": "D", "kappa": "K", "α": "A", "β": "B", "γ": "G", "δ": "D",
          "κ": "K"}
# A phosphorylated protein as papers write it: "phospho-AMPK", "p-ACC", "phospho-Akt" (the protein a name in
# capitals, so "p-value" is none).
_PHOSPHO = re.compile(r"(?:phospho|p)-([A-Z][A-Za-z0-9]{1,7})")
# An open reading frame of a chromosome ("C12orf43"): a gene whatever HGNC calls it now.
_ORF = re.compile(r"C\d{1,2}orf\d{1,3}")
_BACTERIAL_PROTEIN = re.compile(r"[A-Z][a-z]{2}[A-Z]?")
# Shapes of a name no rule typed that a life-science paper mostly gives a gene or protein (Field.untyped_name).
_GENE_LIKE = (re.compile(r"[A-Za-z]{3,6}-?\d{1,3}[A-Za-z]{0,2}"), re.compile(r"[A-Z]{1,3}-[A-Z][a-z]{1,2}"),
              re.compile(r"[A-Z][a-z]{2}[A-Z]"))
# A protein's symbol with its species' letter: "mCTRP3" (mouse), "hCTRP", "rTNF" (three capitals or more).
_SPECIES_PREFIXED = re.compile(r"[mhrz][A-Z]{3,}\d{0,2}")
_RESIDUE = re.compile(r"(?:Ala|Arg|Asn|Asp|Cys|Gln|Glu|Gly|His|Ile|Leu|Lys|Met|Phe|Pro|Ser|Thr|Trp|Tyr|Val)\d+")
# Words next to a name that say it is a gene or protein ("TP53 mutation", "expression of BRCA1", "anti-Dps antibody").
_GENE_CONTEXT = {"gene", "genes", "protein", "proteins", "expression", "expressed", "mutation", "mutations", "mutant",
                 "mutants", "knockout", "knockdown", "promoter", "mrna", "transcription", "transcript", "allele",
                 "alleles", "variant", "variants", "encoding", "encodes", "encoded", "antibody", "overexpression",
                 "deletion", "homolog", "homologue", "isoform", "binding", "phosphorylation", "activity", "locus",
                 "domain", "signaling", "signalling", "pathway", "inhibition", "receptor", "deficient", "null"}


def zipf(word: str) -> float:
    return zipf_frequency(word, "en") if word else 0.0


@dataclass
class Field:
    """One field's schema and cues, read from its JSON file."""

    name: str
    label: str
    types: list[str]
    cs_types: dict[str, str] = field(default_factory=dict)
    plain: set[str] = field(default_factory=set)
    cues: dict[str, dict] = field(default_factory=dict)
    venue_words: list[str] = field(default_factory=list)
    vocabulary: set[str] = field(default_factory=set)
    name_shapes: bool = False
    suffix_max_zipf: float = 3.6
    lexicon: dict[str, str] = field(default_factory=dict)  # lower-case name → type (generated lists)
    not_suffixed: set[str] = field(default_factory=set)  # words whose ending misleads ("covariate", "routine")

    @property
    def is_cs(self) -> bool:
        return self.name == CS

    def allowed_types(self) -> list[str]:
        """The types a paper of this field may have, the general ones first."""
        return list(dict.fromkeys([*GENERAL_TYPES, *self.types]))

    def cs_vote(self, vote: str) -> str:
        """What a vote of the computer-science rules becomes in this field ("" = none)."""
        if self.is_cs or not vote or vote == "concept":
            return vote
        return self.cs_types.get(vote, vote if vote in GENERAL_TYPES else "")

    def is_plain(self, words: list[str]) -> bool:
        """A word this field never types ("patient", "cohort", "sample"), alone or after a common adjective."""
        return bool(words) and words[-1] in self.plain and (len(words) == 1 or zipf(words[0]) >= 4.0)

    def cue_type(self, words: list[str]) -> str:
        """The type a phrase's lower-case words (last one singular) get from this field's heads, whole words and
        suffixes, or ""."""
        if not words or self.is_cs:
            return ""
        full, head = " ".join(words), words[-1]
        if full in self.lexicon:
            return self.lexicon[full]
        for kind, cue in self.cues.items():
            if full in cue.get("words", ()):
                return kind
        if self.is_plain(words):
            return ""
        for kind, cue in self.cues.items():
            heads = cue.get("heads", ())
            if head in heads or " ".join(words[-2:]) in heads:
                if head in cue.get("weak_heads", ()) and len(words) == 1:
                    continue  # "level", "energy" alone say nothing
                return kind
        letters = re.sub(r"[^a-z]", "", head)
        if len(letters) >= 5 and zipf(letters) < self.suffix_max_zipf and head not in self.not_suffixed:
            for kind, cue in self.cues.items():
                if any(head.endswith(s) and len(head) > len(s) + 2 for s in cue.get("suffixes", ())):
                    return kind
        return ""

    def name_type(self, name: str) -> str:
        """The type a name's shape gives in this field: a formula, a binomial, a gene or protein symbol, a listed
        name; or ""."""
        if self.is_cs:
            return ""
        low = " ".join(name.lower().split())
        if low in self.lexicon:
            return self.lexicon[low]
        for kind, cue in self.cues.items():
            if low in cue.get("words", ()):
                return kind
        if self.name_shapes and (_SPECIES_PREFIXED.fullmatch(name) or _hgnc_symbol(name)):
            return "gene_or_protein"  # "CD4" is a receptor before it is carbon and deuterium; "mCTRP3" mouse CTRP3
        if " " not in name and FORMULA.fullmatch(name) and _FORMULA_COUNT.search(name) and name != name.lower():
            return "material" if "material" in self.types and not _molecular(name) else "chemical"
        if "organism" in self.types and BINOMIAL.fullmatch(name) and _binomial(name, self.cues["organism"]):
            return "organism"
        if self.name_shapes and _gene_symbol(name):
            return "gene_or_protein"
        return ""

    def untyped_name(self, name: str) -> str:
        """What a name nothing else types most often is in this field: in the life sciences a symbol with letters
        and a number, or a protein's mixed-case name ("Pdc5", "LKB-1", "ATP5SL", "EF-Tu", "LacZ") is a gene or a
        protein (bench/fields_dev: 8 of the 9 names of this shape the judges marked in life papers were; the ninth,
        HEK293, is a cell line the lexicon types first); not a residue ("Arg381"); else ""."""
        if not self.name_shapes or " " in name or _RESIDUE.fullmatch(name) or name.endswith("RNA"):
            return ""
        return "gene_or_protein" if any(p.fullmatch(name) for p in _GENE_LIKE) and not name.islower() else ""

    def context_type(self, name: str, before: list[str], after: list[str]) -> str:
        """The type the words around a name give it in this field: a gene or protein symbol next to "expression",
        "mutation", "protein"…; or ""."""
        if not self.name_shapes or " " in name:
            return ""
        near = set(before[-2:]) | set(after[:2])
        shaped = any(p.fullmatch(name) for p in _GENE_SHAPES) or _BACTERIAL_PROTEIN.fullmatch(name) and zipf(
            name.lower()) < 2.5
        if shaped and near & _GENE_CONTEXT:
            return "gene_or_protein"
        return ""


def _gene_symbol(name: str) -> bool:
    """A gene or protein symbol by shape and HGNC: a symbol's shape HGNC approves ("TP53", "IL-6"), any name in
    capitals HGNC approves as written ("PASK", "APOE": no shape rule needed), a chromosome's open reading frame
    ("C12orf43"), or a phosphorylated protein ("phospho-AMPK")."""
    if " " in name or len(name) < 3:
        return False
    if _ORF.fullmatch(name) or _PHOSPHO.fullmatch(name):
        return True
    if any(p.fullmatch(name) for p in _GENE_SHAPES) and _hgnc_symbol(name):
        return True
    return name.replace("-", "").isupper() and name.replace("-", "") in _genes()


def _hgnc_symbol(name: str) -> bool:
    """A symbol HGNC approves, as papers write it: "BRCA1", "IL-6" (IL6), "TNF-alpha" (TNF), "IFN-γ" (IFNG),
    "p53" (TP53)."""
    if re.fullmatch(r"p\d{2,3}", name):
        return True
    bare = name.replace("-", "")
    for greek, letter in _GREEK.items():
        if bare.endswith(greek):
            stem = bare[:-len(greek)]
            return stem in _genes() or stem + letter in _genes()
    return bare in _genes()


def _molecular(formula: str) -> bool:
    """A small molecule rather than a solid: only H, C, N, O, S, P, halogens ("H2O2", "CO2", "CH4")."""
    return re.fullmatch(r"(?:H|D|C|N|O|S|P|F|Cl|Br|I|\d|[+-])+", formula) is not None


def _binomial(name: str, cue: dict) -> bool:
    genus, species = name.split(" ", 1)
    if not genus.endswith(".") and zipf(genus.lower()) >= 3.0:
        return False  # "Table shows", "Results indicate": a sentence, not a genus
    return zipf(species) < 3.0 and species.endswith(tuple(cue.get("genus_epithet_endings", ())))


@lru_cache(maxsize=1)
def _genes() -> frozenset[str]:
    return frozenset(_lines(DATA / "genes.txt"))


def _lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]


def _load(name: str) -> Field:
    data = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    out = Field(name=data["field"], label=data["label"], types=data["types"], cs_types=data.get("cs_types", {}),
                plain=set(data.get("plain", ())), cues=data.get("cues", {}), venue_words=data["venue_words"],
                vocabulary=set(data["vocabulary"]), name_shapes=data.get("name_shapes", False),
                suffix_max_zipf=data.get("suffix_max_zipf", 3.6), not_suffixed=set(data.get("not_suffixed", ())))
    if name == LIFE:
        out.lexicon.update((d, "disease") for d in _lines(DATA / "diseases.txt"))
    # The words that name the field's things say which field a text is in too (one-word heads and words, and their
    # plurals: "fibroblasts", "alloys"), when they are not everyday words ("test", "source") nor measures.
    # Databases and techniques are named in every field's papers ("PubMed", "chromatography"): they say nothing of
    # the field either.
    cue_words = {w for kind, cue in out.cues.items() if kind not in ("metric", "property", "dataset", "method")
                 for w in [*cue.get("heads", ()), *cue.get("words", ())]
                 if " " not in w and len(w) >= 4 and zipf(w) < 4.0}
    out.vocabulary |= cue_words | {w + "s" for w in cue_words if not w.endswith("s")}
    return out


FIELDS: dict[str, Field] = {name: _load(name) for name in (CS, LIFE, PHYSICAL)}
_TOKEN = re.compile(r"[a-z][a-z0-9-]+")


def vocabulary_counts(text: str) -> tuple[dict[str, int], int]:
    """Per field, how many of its signal words a text uses; and how many words it has."""
    tokens = _TOKEN.findall(text.lower())
    counts = Counter(tokens)
    return {name: sum(counts[w] for w in f.vocabulary) for name, f in FIELDS.items()}, len(tokens)


def vocabulary_scores(text: str) -> dict[str, float]:
    """Per field, how many of its signal words a text uses per 1,000 words."""
    counts, total = vocabulary_counts(text)
    return {name: 1000 * n / max(total, 1) for name, n in counts.items()}


def venue_field(venue: str) -> str:
    """The field a venue's name says ("Nucleic Acids Research" → life, "Applied Physics Letters" → physical,
    "Proceedings of ACL" → cs), or "" when it says none or several."""
    low = f" {venue.lower()} "
    hits = [name for name, f in FIELDS.items()
            if any(re.search(rf"(?<![a-z]){re.escape(w)}", low) for w in f.venue_words)]
    return hits[0] if len(hits) == 1 else ""


def detect_field(text: str, venue: str = "") -> str:
    """A paper's field from its venue (when it names one field) and its vocabulary: the field whose signal words
    it uses most, by a clear margin; computer science (the schema the graph was first tuned on) when none
    stands out. The venue counts as much as a clear lead in vocabulary."""
    counts, total = vocabulary_counts(text)
    scores = {name: 1000 * n / max(total, 1) for name, n in counts.items()}
    by_venue = venue_field(venue)
    if by_venue:
        scores[by_venue] += 15.0
        counts[by_venue] += 3
    # The stronger of the two other fields, when it says so with at least three signal words (an abstract of 200
    # words says "patients" and "surgery" a few times), at least 8 in 1,000 (a computer-science paper may mention
    # patients in passing), and clearly more than the computer-science words. Between life and physical sciences
    # (a chemistry paper on enzymes uses both) the higher wins.
    best = max((LIFE, PHYSICAL), key=lambda name: scores[name])
    if counts[best] >= 3 and scores[best] >= 8.0 and scores[best] >= 1.3 * scores[CS]:
        return best
    return CS


def field_of(name: str) -> Field:
    return FIELDS.get(name, FIELDS[CS])
