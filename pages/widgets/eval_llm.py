"""The Evaluate page's LLM panels: generating a question set from the collection and the pairwise judge of two
modes. Split from eval_view (results and runs) so each module has one job. LLM replies are untrusted: markdown
is escaped and tables render their cells as text."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core.eval.questions import questions_to_table
from core.library import Library
from core.models.llm.base import LLMError
from core.schema.eval import RunRecord
from core.store.base import EvalStore
from core.text.safe_markdown import md_escape
from pages.widgets.eval_view import run_label


# ---------------------------------------------------------------------------------------------- generation
def generation_panel(lib: Library, store: EvalStore, llm) -> None:
    with st.expander("Generate questions from the collection (needs an LLM)", expanded=False):
        if llm is None:
            st.caption("Set an LLM on the Settings page to generate questions.")
            return
        scheme = st.radio("Scheme", ["From passages (with reference answers)", "Users × tasks × questions"],
                          key="eval_gen_scheme", horizontal=True)
        if scheme.startswith("From passages"):
            n = st.number_input("Questions", 1, 200, 10, key="eval_gen_n")
        else:
            c1, c2, c3 = st.columns(3)
            users = c1.number_input("Users", 1, 10, 3, key="eval_gen_users")
            tasks = c2.number_input("Tasks per user", 1, 10, 3, key="eval_gen_tasks")
            per_task = c3.number_input("Questions per task", 1, 10, 3, key="eval_gen_questions")
        if st.button("Generate", key="eval_generate"):
            from core.eval import generate

            bar = st.progress(0.0, text="Generating…")

            def progress(done: int, total: int) -> None:
                bar.progress(done / total if total else 1.0, text=f"Generating… {done} of {total}")

            try:
                if scheme.startswith("From passages"):
                    made = generate.generate_from_chunks(lib, llm, int(n), on_progress=progress)
                else:
                    made = generate.generate_personas(lib, llm, users=int(users), tasks=int(tasks),
                                                      questions=int(per_task), on_progress=progress)
            except (LLMError, ValueError) as exc:
                st.error(f"Generation failed: {md_escape(str(exc))}")
                made = []
            bar.empty()
            dropped, stopped = getattr(made, "dropped", []), getattr(made, "stopped", "")
            if stopped:
                st.warning(md_escape(stopped))
            if dropped:
                st.caption(f"{len(dropped)} repl(ies) left out: " + md_escape("; ".join(dropped[:5]))
                           + (" …" if len(dropped) > 5 else ""))
            st.session_state["eval_generated"] = questions_to_table(made)
        generated = st.session_state.get("eval_generated")
        if generated:
            st.caption("Review and edit before saving: the questions, reference answers and passages are the LLM's.")
            edited = st.data_editor(generated, num_rows="dynamic", width="stretch", key="eval_gen_editor")
            name = st.text_input("Save as", value="generated", key="eval_gen_name")
            if st.button("Save the generated set", key="eval_gen_save"):
                from core.eval.questions import QuestionSetError, questions_from_table

                try:
                    saved = store.save_set(name, questions_from_table(edited_rows(edited), "the generated questions"),
                                           source="generated")
                except QuestionSetError as exc:
                    st.error(md_escape(str(exc)))
                else:
                    st.session_state.pop("eval_generated", None)
                    st.success(f"Saved {md_escape(saved.name)}: {len(saved.questions)} questions.")


def edited_rows(edited) -> list[dict]:
    """st.data_editor's value as rows, whether it handed back a DataFrame or the list it was given."""
    if isinstance(edited, pd.DataFrame):
        return edited.to_dict("records")
    return [dict(row) for row in edited]


# ---------------------------------------------------------------------------------------------- pairwise
def pairwise_panel(store: EvalStore, llm) -> None:
    runs = [r for r in store.runs() if len(r.modes) >= 2 and r.done]
    if not runs:
        st.info("Judge two modes once a run with at least two modes has answers.")
        return
    run = st.selectbox("Run", runs, format_func=run_label, key="eval_pair_run")
    c1, c2 = st.columns(2)
    mode_a = c1.selectbox("Mode A", run.modes, index=0, key="eval_pair_a")
    mode_b = c2.selectbox("Mode B", run.modes, index=1, key="eval_pair_b")
    if llm is None:
        st.caption("The pairwise judge needs an LLM: set one on the Settings page.")
    elif mode_a == mode_b:
        st.caption("Choose two different modes.")
    elif st.button("Judge", key="eval_pair_go", type="primary"):
        _judge(store, run, llm, mode_a, mode_b)
    for saved in store.pairwise(run.id):
        _show_verdicts(saved)


def _judge(store: EvalStore, run: RunRecord, llm, mode_a: str, mode_b: str) -> None:
    from core.eval.pairwise import judge_pairs

    qset = store.get_set(run.set_id)
    texts = {q.id: q.question for q in qset.questions} if qset else {}
    answers: dict[str, dict[str, str]] = {}
    for result in store.results(run.id):
        answers.setdefault(result.question_id, {})[result.mode] = result.answer
    items = [(qid, texts.get(qid, qid), by_mode[mode_a], by_mode[mode_b]) for qid, by_mode in answers.items()
             if by_mode.get(mode_a) and by_mode.get(mode_b)]
    if not items:
        st.warning("No question has answers from both modes.")
        return
    bar = st.progress(0.0, text="Judging…")

    def progress(done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0, text=f"Judging… {done} of {total}")

    try:
        summary = judge_pairs(llm, items, mode_a, mode_b, on_progress=progress)
    except (LLMError, ValueError) as exc:
        st.error(f"The judge failed: {md_escape(str(exc))}")
        return
    finally:
        bar.empty()
    store.save_pairwise(run.id, mode_a, mode_b, summary.to_dict())


def _show_verdicts(saved: dict) -> None:
    mode_a, mode_b = saved["mode_a"], saved["mode_b"]
    st.markdown(f"#### {md_escape(mode_a)} vs {md_escape(mode_b)}")
    rows = [{"criterion": criterion, mode_a: wins.get(mode_a, 0), mode_b: wins.get(mode_b, 0),
             "tie": wins.get("tie", 0)} for criterion, wins in saved["wins"].items()]
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption(f"{saved['disagreements']} verdict(s) changed when the answers were swapped (counted as ties); "
               f"{saved['unreadable']} criterion verdict(s) had no winner (a judge reply could not be read or a "
               f"call failed).")
    if saved.get("stopped"):
        st.warning(md_escape(saved["stopped"]))
    with st.expander("Per question"):
        for verdict in saved["verdicts"]:
            st.markdown(f"**{md_escape(verdict['question'])}**")
            if verdict.get("error"):
                st.warning(md_escape(verdict["error"]))
            for criterion, v in verdict["criteria"].items():
                st.markdown(f"- {md_escape(criterion)}: **{md_escape(v['winner'] or 'unreadable')}**"
                            + ("" if v["agreed"] else " (orders disagreed)")
                            + (f" — {md_escape(v['explanation'])}" if v.get("explanation") else ""))
    st.download_button("Download verdicts (JSON)", json.dumps(saved, ensure_ascii=False, indent=2),
                       file_name=f"pairwise-{mode_a}-{mode_b}.json", key=f"eval_pair_dl_{mode_a}_{mode_b}")
