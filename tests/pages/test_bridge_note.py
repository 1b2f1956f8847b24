"""The Ask and Compare pages' source label for a second hop (pages/widgets/query_view.bridge_note): which source it
continues and through which name, escaped (the name comes from a paper's text)."""
from core.query.records import Source
from pages.widgets.query_view import bridge_note


def _source(**bridge) -> Source:
    return Source(n=3, chunk_id="c3", doc_id="d", doc_title="P", page=0, bbox=None, kind="text", section="",
                  text="Miriam Castellane studied chemistry.", **bridge)


def test_a_second_hop_names_the_source_it_continues_and_the_shared_name():
    assert bridge_note(_source(bridge_from=1, bridge_name="Miriam Castellane")) == \
        " · second hop: shares “Miriam Castellane” with \\[1\\]"
    assert bridge_note(_source(bridge_from=2)) == " · second hop: shares a name with \\[2\\]"
    assert bridge_note(_source()) == ""


def test_the_name_is_escaped_for_markdown():
    note = bridge_note(_source(bridge_from=1, bridge_name="*x* [1](javascript:alert(1)) <b>"))
    assert "](" not in note and "<b>" not in note and "\\*x\\*" in note
