"""The local trainer's Pipes reader hands on whole lines only, however the writer's bytes arrive."""

import json
import sys
import threading
import time

import dagster as dg
import pytest

from marin_assets.train.pipes_line_reader import CompleteLinesFileMessageReader, complete_lines


def test_a_line_written_in_pieces_is_read_once_whole(tmp_path):
    path = tmp_path / "messages"
    path.write_text("")
    message = json.dumps({"summary": "x" * 20_000}) + "\n"
    done = threading.Event()

    def write_slowly():
        with open(path, "a") as f:
            for start in range(0, len(message), 4096):  # page by page, as the kernel fills the file
                f.write(message[start:start + 4096])
                f.flush()
                time.sleep(0.02)
        done.set()

    writer = threading.Thread(target=write_slowly)
    with open(path) as stream:
        writer.start()
        lines = list(complete_lines(stream, done.is_set, poll_s=0.001))
    writer.join()
    assert lines == [message]
    assert json.loads(lines[0])["summary"] == "x" * 20_000


def test_lines_after_the_last_poll_are_read_and_a_cut_line_is_an_error(tmp_path):
    path = tmp_path / "messages"
    path.write_text('{"a": 1}\n{"b": 2}\n{"c": ')
    with open(path) as stream:
        lines = complete_lines(stream, lambda: True)
        assert next(lines) == '{"a": 1}\n'
        assert next(lines) == '{"b": 2}\n'
        with pytest.raises(ValueError, match="unterminated line"):
            next(lines)


def test_a_subprocess_reports_a_large_custom_message_through_the_reader(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(
        "from dagster_pipes import open_dagster_pipes\n"
        "with open_dagster_pipes() as pipes:\n"
        "    for i in range(20):\n"
        "        pipes.log.info('step %d' % i)\n"
        "    pipes.report_custom_message({'domains': [{'name': 'd%d' % i, 'bpb': i / 7} for i in range(400)]})\n"
    )

    @dg.asset
    def child(context: dg.AssetExecutionContext, pipes_subprocess_client: dg.PipesSubprocessClient):
        invocation = pipes_subprocess_client.run(context=context, command=[sys.executable, str(script)])
        messages = invocation.get_custom_messages()
        assert len(messages[-1]["domains"]) == 400
        return invocation.get_materialize_result()

    client = dg.PipesSubprocessClient(message_reader=CompleteLinesFileMessageReader())
    result = dg.materialize([child], resources={"pipes_subprocess_client": client})
    assert result.success
