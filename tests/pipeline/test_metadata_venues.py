"""A venue as a name (core/pipeline/metadata/fields.venue_name): a venue line's pages, volume and issue, places and
dates are no part of it, so two papers of one proceedings name one venue."""
from __future__ import annotations

import pytest

from core.text.venues import venue_key, venue_name

ACL = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics"


@pytest.mark.parametrize(("line", "name"), [
    (f"{ACL}, pages 2270–2282", ACL),
    (f"{ACL}, pages 4969–4983 July 5 - 10, 2020", ACL),
    ("Proceedings of NAACL-HLT 2018, pages 84–91 New Orleans, Louisiana, June 1 - 6, 2018",
     "Proceedings of NAACL-HLT 2018"),
    ("in Proceedings of the 28 th International Conference on Machine Learning, Bellevue, WA, USA, 2011",
     "Proceedings of the 28th International Conference on Machine Learning"),
    ("Proceedings of the 30th VLDB Conference, Toronto, Canada, 2004", "Proceedings of the 30th VLDB Conference"),
    ("Journal of Hydrology 310 (2005) 253–265", "Journal of Hydrology"),
    ("International Psychogeriatrics (2014), 26:1, 147–154", "International Psychogeriatrics"),
    ("Journal of Cosmology and Astroparticle Physics 10 (2008) 003 (stacks.iop.org/JCAP/2008/i=10/a=003)",
     "Journal of Cosmology and Astroparticle Physics"),
    ("Nature 521, 436–444 (2015)", "Nature"),
    ("To appear in OSDI 2006 1", "OSDI"),
    ("Published as a conference paper at ICLR 2021", "ICLR"),
    ("Rehabilitation Research and Practice, Volume 2010, Article ID 157939", "Rehabilitation Research and Practice"),
])
def test_a_venue_line_keeps_only_the_venue_s_name(line, name):
    assert venue_name(line) == name


def test_spacing_case_and_invisible_characters_make_no_other_venue():
    assert venue_key(f" {ACL.upper()}\u200b ") == venue_key(ACL.replace(" ", "\u00a0 ")) == venue_key(ACL)
    assert venue_key("Journal of Hydrology") != venue_key("Journal of Hydrology Research")
