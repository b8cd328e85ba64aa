"""QuietConsole: child-process output goes to the log file, the terminal gets one line per run."""

import subprocess
import sys
import textwrap


def run_script(body: str, tmp_path) -> tuple[str, str]:
    script = textwrap.dedent(f"""
        import subprocess, sys
        from marin_assets.console import QuietConsole
        log = {str(tmp_path / "logs" / "run.log")!r}
        {textwrap.indent(textwrap.dedent(body), "        ").strip()}
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    log_file = tmp_path / "logs" / "run.log"
    return out.stdout + out.stderr, log_file.read_text() if log_file.exists() else ""


def test_child_process_and_python_output_go_to_the_log_and_the_terminal_gets_the_summary(tmp_path):
    terminal, log = run_script("""
        with QuietConsole(log, total=2) as console:
            with console.capture():
                print("dagster DEBUG event", flush=True)
                subprocess.run([sys.executable, "-c", "import sys; print('maxtext step 1'); print('jvm noise', file=sys.stderr)"])
            console.finished("cleaned_documents", "handbook", ok=True, seconds=1.5)
            with console.capture():
                print("more noise", flush=True)
            console.finished("tokenizer", None, ok=False, seconds=0.2)
    """, tmp_path)
    assert "dagster DEBUG event" in log and "maxtext step 1" in log and "jvm noise" in log and "more noise" in log
    assert "noise" not in terminal and "DEBUG" not in terminal and "maxtext" not in terminal
    lines = [line for line in terminal.splitlines() if line.startswith("[marin]")]
    assert lines[0].startswith("[marin] ok     cleaned_documents [handbook]") and "(1/2)" in lines[0]
    assert lines[1].startswith("[marin] FAILED tokenizer ") and "(2/2)" in lines[1]


def test_verbose_captures_nothing(tmp_path):
    terminal, log = run_script("""
        with QuietConsole(log, total=1, verbose=True) as console:
            with console.capture():
                subprocess.run([sys.executable, "-c", "print('maxtext step 1')"])
            console.finished("tokenizer", None, ok=True, seconds=0.1)
    """, tmp_path)
    assert "maxtext step 1" in terminal and log == ""
