"""The one typed API over a workspace that every remote face calls: REST, MCP and the OpenAI-compatible chat
(core/api/). One small module per job; each function takes a Library and returns plain records
(core/service/records.py) that serialise to JSON as they are. A face never reaches below this layer, so the same
question gives the same answer and citations whichever way it comes in.

    papers.py    list, metadata, delete, BibTeX
    search.py    passages matching a query
    ask.py       a question through a mode, answered with citations (streamed or not)
    passages.py  the text of a paper's page, box or chunk
    graph.py     an entity's neighbourhood and the paths between two, with the passages they come from
    ingest.py    uploads stored and queued, processed in the background, polled
    status.py    the workspace at a glance
    evaluation.py saved evaluation runs: the list with each mode's metrics, one run's per-question rows
    inputs.py    what every operation checks of its arguments (text, ids, numbers)
    errors.py    ServiceError and its stable codes
"""
