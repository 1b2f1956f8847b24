"""The merged entity graph in Neo4j: the optional GraphStore (GraphConfig.backend = "neo4j").

Layout: paper nodes (keys starting with PAPER_PREFIX) are labelled `Paper`, every other node `Entity`; both carry
a unique `key` and the GraphNode fields as properties (lists as list properties, None as an absent property).
An edge is one relationship from its source node to its target node whose type is GraphEdge.relation (RELATED,
MENTIONED_IN) and whose properties are the other GraphEdge fields. As in the SQLite store, an edge is keyed by
(source, target) as given: upserting a pair replaces whatever relationship that pair had, of any type.

The label follows from the key, so every lookup names its label and uses the uniqueness constraint's index.
Cypher cannot take a label or relationship type as a parameter: both are formatted into the query only after
they are checked against a fixed set (labels) or a plain-identifier pattern (relation types).

Rule shared with SQLite (tests/test_graph_store_contract.py): an edge whose endpoint is missing once the batch's
deletions and node upserts are applied makes `apply()` raise ValueError and leaves the store unchanged.
"""
from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from core.schema.graph import GraphEdge, GraphNode
from core.settings.config import GraphConfig
from core.store.base import StoreUnavailable
from core.store.property_graph import LABELS, edge_props, label_of, node_props, relation_type

_CLEAR_BATCH = 10_000  # nodes detached and deleted per transaction, so clearing a large graph never runs out of memory


def _node(props: dict[str, Any]) -> GraphNode:
    return GraphNode(key=props["key"], name=props.get("name", ""), type=props.get("type", ""),
                     description=props.get("description", ""), source_chunks=list(props.get("source_chunks") or []),
                     doc_ids=list(props.get("doc_ids") or []), extractors=list(props.get("extractors") or []),
                     community=props.get("community"), year=props.get("year"))


def _edge(source: str, target: str, relation: str, props: dict[str, Any]) -> GraphEdge:
    return GraphEdge(source=source, target=target, relation=relation, keywords=props.get("keywords", ""),
                     description=props.get("description", ""), weight=float(props.get("weight", 1.0)),
                     source_chunks=list(props.get("source_chunks") or []), doc_ids=list(props.get("doc_ids") or []),
                     year=props.get("year"))


_EDGE_RETURN = "RETURN a.key AS source, b.key AS target, type(r) AS relation, properties(r) AS props"


def _by_label(keys: Iterable[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for key in dict.fromkeys(keys):
        groups[label_of(key)].append(key)
    return groups


def _pairs_by_labels(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[list[str]]]:
    groups: dict[tuple[str, str], list[list[str]]] = defaultdict(list)
    for source, target in dict.fromkeys(pairs):
        groups[(label_of(source), label_of(target))].append([source, target])
    return groups


class Neo4jGraphStore:
    def __init__(self, uri: str, user: str, password: str | None, database: str | None = None):
        import neo4j
        from neo4j import exceptions

        self.uri, self.database = uri, database or None
        self._driver = neo4j.GraphDatabase.driver(uri, auth=(user, password) if password else None)
        try:
            self._driver.verify_connectivity()
            with self._session() as session:
                for label in LABELS:
                    session.run(f"CREATE CONSTRAINT {label.lower()}_key IF NOT EXISTS "
                                f"FOR (n:{label}) REQUIRE n.key IS UNIQUE").consume()
        except exceptions.AuthError as exc:
            self._driver.close()
            raise StoreUnavailable(f"Neo4j at {uri} refused the login of {user!r}: set NEO4J_PASSWORD "
                                   f"({exc})") from exc
        except (exceptions.ServiceUnavailable, exceptions.SessionExpired, OSError) as exc:
            self._driver.close()
            raise StoreUnavailable(f"no Neo4j server answers at {uri}: start one, or set the graph backend "
                                   f"to sqlite ({exc})") from exc

    def close(self) -> None:
        self._driver.close()

    def _session(self):
        return self._driver.session(database=self.database)

    # --- reads ------------------------------------------------------------------------------------------------

    def get_node(self, key: str) -> GraphNode | None:
        return self.get_nodes([key]).get(key)

    def get_nodes(self, keys: Iterable[str]) -> dict[str, GraphNode]:
        groups = _by_label(keys)

        def read(tx) -> dict[str, GraphNode]:
            out = {}
            for label, batch in groups.items():
                for record in tx.run(f"UNWIND $keys AS k MATCH (n:{label} {{key: k}}) RETURN properties(n) AS p",
                                     keys=batch):
                    out[record["p"]["key"]] = _node(record["p"])
            return out

        with self._session() as session:
            return session.execute_read(read) if groups else {}

    def get_edge(self, source: str, target: str) -> GraphEdge | None:
        return self.get_edges([(source, target)]).get((source, target))

    def get_edges(self, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], GraphEdge]:
        groups = _pairs_by_labels(pairs)

        def read(tx) -> dict[tuple[str, str], GraphEdge]:
            out = {}
            for (source_label, target_label), batch in groups.items():
                query = (f"UNWIND $pairs AS p MATCH (a:{source_label} {{key: p[0]}})-[r]->"
                         f"(b:{target_label} {{key: p[1]}}) {_EDGE_RETURN}")
                for record in tx.run(query, pairs=batch):
                    edge = _edge(record["source"], record["target"], record["relation"], record["props"])
                    out[edge.pair] = edge
            return out

        with self._session() as session:
            return session.execute_read(read) if groups else {}

    def node_edges(self, key: str) -> list[GraphEdge]:
        query = (f"MATCH (n:{label_of(key)} {{key: $key}})-[r]-() WITH DISTINCT r "
                 f"RETURN startNode(r).key AS source, endNode(r).key AS target, type(r) AS relation, "
                 f"properties(r) AS props")

        def read(tx) -> list[GraphEdge]:
            return [_edge(r["source"], r["target"], r["relation"], r["props"]) for r in tx.run(query, key=key)]

        with self._session() as session:
            return session.execute_read(read)

    def edges_of(self, keys: Iterable[str]) -> list[GraphEdge]:
        found: dict[tuple[str, str], GraphEdge] = {}
        for key in dict.fromkeys(keys):
            for edge in self.node_edges(key):
                found.setdefault(edge.pair, edge)
        return list(found.values())

    def degrees(self, keys: Iterable[str]) -> dict[str, int]:
        keys = list(dict.fromkeys(keys))
        out = dict.fromkeys(keys, 0)
        groups = _by_label(keys)

        def read(tx) -> None:
            for label, batch in groups.items():
                for record in tx.run(f"UNWIND $keys AS k MATCH (n:{label} {{key: k}}) "
                                     f"RETURN k, size([(n)-[r]-() | r]) AS degree", keys=batch):
                    out[record["k"]] = record["degree"]

        if groups:
            with self._session() as session:
                session.execute_read(read)
        return out

    def version(self) -> str:
        # No write counter here yet: the counts, as the mention index used before the SQLite store had one (an
        # edit that keeps both counts is then missed until the sources' version moves).
        return str(self.counts())

    def has_nodes(self) -> bool:
        return bool(self.counts()[0])

    def counts(self) -> tuple[int, int]:
        def read(tx) -> tuple[int, int]:
            nodes = sum(tx.run(f"MATCH (n:{label}) RETURN count(n) AS c").single()["c"] for label in LABELS)
            edges = tx.run("MATCH (a)-[r]->() WHERE a:Entity OR a:Paper RETURN count(r) AS c").single()["c"]
            return nodes, edges

        with self._session() as session:
            return session.execute_read(read)

    def all_nodes(self) -> Iterator[GraphNode]:
        """Every node by key, streamed: the session stays open while the caller iterates."""
        with self._session() as session:
            for record in session.run("MATCH (n) WHERE n:Entity OR n:Paper RETURN properties(n) AS p "
                                      "ORDER BY n.key"):
                yield _node(record["p"])

    def all_edges(self) -> Iterator[GraphEdge]:
        with self._session() as session:
            for record in session.run(f"MATCH (a)-[r]->(b) WHERE a:Entity OR a:Paper {_EDGE_RETURN} "
                                      f"ORDER BY source, target"):
                yield _edge(record["source"], record["target"], record["relation"], record["props"])

    def edge_outline(self) -> Iterator[tuple[str, str, str, float]]:
        with self._session() as session:
            for record in session.run("MATCH (a)-[r]->(b) WHERE a:Entity OR a:Paper RETURN a.key AS source, "
                                      "b.key AS target, type(r) AS relation, r.weight AS weight "
                                      "ORDER BY source, target"):
                yield record["source"], record["target"], record["relation"], float(record["weight"] or 1.0)

    # --- writes -----------------------------------------------------------------------------------------------

    def apply(self, upsert_nodes: Sequence[GraphNode] = (), upsert_edges: Sequence[GraphEdge] = (),
              delete_nodes: Sequence[str] = (), delete_edges: Sequence[tuple[str, str]] = ()) -> None:
        """One transaction, in the SQLite store's order: edge deletions, node deletions (with their edges), node
        upserts, then edge upserts, which fail the whole batch with ValueError if an endpoint is missing."""
        types = {e.pair: relation_type(e.relation) for e in upsert_edges}  # checked before anything is written
        nodes_by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for node in {n.key: n for n in upsert_nodes}.values():  # the last upsert of a key wins, as in SQLite
            nodes_by_label[label_of(node.key)].append(node_props(node))
        edges = {e.pair: e for e in upsert_edges}
        edges_by_shape: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
        for pair, edge in edges.items():
            shape = (label_of(edge.source), label_of(edge.target), types[pair])
            edges_by_shape[shape].append({"source": edge.source, "target": edge.target, "props": edge_props(edge)})

        def write(tx) -> None:
            for (source_label, target_label), batch in _pairs_by_labels(delete_edges).items():
                tx.run(f"UNWIND $pairs AS p MATCH (a:{source_label} {{key: p[0]}})-[r]->"
                       f"(b:{target_label} {{key: p[1]}}) DELETE r", pairs=batch).consume()
            for label, batch in _by_label(delete_nodes).items():
                tx.run(f"UNWIND $keys AS k MATCH (n:{label} {{key: k}}) DETACH DELETE n", keys=batch).consume()
            for label, rows in nodes_by_label.items():
                tx.run(f"UNWIND $rows AS row MERGE (n:{label} {{key: row.key}}) SET n = row", rows=rows).consume()
            if not edges:
                return
            endpoints = {k for pair in edges for k in pair}
            found = set()
            for label, batch in _by_label(endpoints).items():
                found.update(r["k"] for r in tx.run(f"UNWIND $keys AS k MATCH (n:{label} {{key: k}}) RETURN k",
                                                    keys=batch))
            missing = sorted(endpoints - found)
            if missing:  # raising inside the transaction function rolls the whole batch back
                raise ValueError(f"edges point to {len(missing)} missing node(s), e.g. {missing[:3]}")
            # One relationship per (source, target): whatever the pair had, of any type, is replaced.
            for (source_label, target_label), pairs in _pairs_by_labels(edges).items():
                tx.run(f"UNWIND $pairs AS p MATCH (a:{source_label} {{key: p[0]}})-[r]->"
                       f"(b:{target_label} {{key: p[1]}}) DELETE r", pairs=pairs).consume()
            for (source_label, target_label, rel_type), rows in edges_by_shape.items():
                tx.run(f"UNWIND $rows AS row MATCH (a:{source_label} {{key: row.source}}) "
                       f"MATCH (b:{target_label} {{key: row.target}}) CREATE (a)-[r:{rel_type}]->(b) "
                       f"SET r = row.props", rows=rows).consume()

        if upsert_nodes or upsert_edges or delete_nodes or delete_edges:
            with self._session() as session:
                session.execute_write(write)

    def set_communities(self, assignment: dict[str, int | None], keep_others: bool = False) -> None:
        """Replace the community assignment: nodes it does not name lose theirs (unless `keep_others`); unknown
        keys are ignored."""
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for key, community in assignment.items():
            groups[label_of(key)].append({"key": key, "community": community})

        def write(tx) -> None:
            for label in () if keep_others else LABELS:
                tx.run(f"MATCH (n:{label}) WHERE n.community IS NOT NULL REMOVE n.community").consume()
            for label, rows in groups.items():
                tx.run(f"UNWIND $rows AS row MATCH (n:{label} {{key: row.key}}) SET n.community = row.community",
                       rows=rows).consume()

        with self._session() as session:
            session.execute_write(write)

    def clear(self) -> None:
        """Every Entity and Paper node and their edges, in bounded transactions (the constraints stay)."""
        def delete_some(tx) -> int:
            return tx.run("MATCH (n) WHERE n:Entity OR n:Paper WITH n LIMIT $batch DETACH DELETE n "
                          "RETURN count(*) AS c", batch=_CLEAR_BATCH).single()["c"]

        with self._session() as session:
            while session.execute_write(delete_some):
                pass


def neo4j_store_from_config(graph: GraphConfig) -> Neo4jGraphStore:
    """The store GraphConfig names; the password comes from NEO4J_PASSWORD (never from settings.json) and an
    optional database name from NEO4J_DATABASE."""
    return Neo4jGraphStore(graph.neo4j_uri, graph.neo4j_user, os.environ.get("NEO4J_PASSWORD"),
                           database=os.environ.get("NEO4J_DATABASE"))
