"""The operator's view from the CLI: quiet library logs unless --verbose, progress callbacks of the long
jobs (and the bar that stays off stdout), and `semcache stats` against a live HTTP server."""
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from gateway.cache.warmup import warm_all
from gateway.cli import QUIET_LOGGERS, build_parser, main, setup_logging
from gateway.progress import ProgressBar
from gateway.replay.runner import _request_counter
from gateway.store import NewEntry, StoreConfig, open_store

TOKEN = "admin-secret"
STATS = {
    "uptime_s": 3723.4, "backend": "embedded", "routing": "session_affinity",
    "requests": {"HIT": 764, "MISS": 200, "PARTIAL": 36, "BYPASS": 12},
    "hit_rate": 0.764, "partial_rate": 0.036, "precision_proxy": 0.9921, "cache_pollution": 6,
    "saved_prefill_tokens": 123456, "saved_decode_tokens": 65432,
    "decision_latency": {"total": {"count": 1000, "p50_ms_le": 5.0, "p99_ms_le": 50.0},
                         "encode": {"count": 1000, "p50_ms_le": 2.5, "p99_ms_le": None}},
    "upstream_errors": {"timeout": 2.0},
    "cache": {"entries": {"ready": 410, "pending": 7, "invalidated": 3}, "indexed": 410, "hits": 764,
              "saved_tokens": 98765},
    "health": {"database": True, "redis": None},
    "breaker": {"state": "closed", "consecutive_failures": 0, "last_dependency": None, "last_error": None,
                "opened": 1},
    "replicas": [
        {"name": "replica-alpha:8001", "weight": 1.0, "state": "healthy", "in_flight": 3, "ejections": 0,
         "last_error": None, "back_in_s": None, "requests": 500, "errors": 1, "prompt_tokens": 9000,
         "cached_tokens": 4500, "cached_share": 0.5},
        {"name": "replica-beta:8001", "weight": 1.0, "state": "ejected", "in_flight": 0, "ejections": 2,
         "last_error": "ConnectError", "back_in_s": 4.2, "requests": 480, "errors": 9, "prompt_tokens": 0,
         "cached_tokens": 0, "cached_share": None},
    ],
}


# ---- logs ---------------------------------------------------------------------------------------------------
@pytest.fixture
def restore_log_levels():
    names = ["", *QUIET_LOGGERS]
    saved = {name: logging.getLogger(name).level for name in names}
    yield
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


def test_library_loggers_are_quiet_unless_verbose(restore_log_levels):
    httpx_log = logging.getLogger("httpx")
    setup_logging(build_parser().parse_args(["index", "rebuild"]))
    assert httpx_log.getEffectiveLevel() == logging.WARNING
    assert not httpx_log.isEnabledFor(logging.INFO)
    assert logging.getLogger("sentence_transformers").level == logging.WARNING

    verbose = build_parser().parse_args(["--verbose", "index", "rebuild"])
    assert verbose.verbose == 1
    setup_logging(verbose)
    assert httpx_log.isEnabledFor(logging.INFO) and not httpx_log.isEnabledFor(logging.DEBUG)

    setup_logging(build_parser().parse_args(["-vv", "replay"]))
    assert httpx_log.isEnabledFor(logging.DEBUG)


def test_serve_keeps_its_own_logging(restore_log_levels):
    logging.getLogger("httpx").setLevel(logging.ERROR)      # what serve's own setup would have chosen
    setup_logging(build_parser().parse_args(["serve", "--log-level", "warning"]))
    assert logging.getLogger("httpx").level == logging.ERROR


def test_migrate_keeps_alembic_revision_lines(restore_log_levels):
    setup_logging(build_parser().parse_args(["migrate"]))
    assert logging.getLogger("alembic").isEnabledFor(logging.INFO)
    setup_logging(build_parser().parse_args(["eval", "cases.jsonl"]))
    assert not logging.getLogger("alembic").isEnabledFor(logging.INFO)


def test_long_jobs_take_no_progress():
    parser = build_parser()
    for argv in (["replay"], ["calibrate", "generated"], ["eval", "x.jsonl"], ["warmup", "x.jsonl"],
                 ["index", "rebuild"], ["models", "prepare"]):
        assert parser.parse_args([*argv, "--no-progress"]).no_progress is True
        assert parser.parse_args(argv).no_progress is False


# ---- progress callbacks -------------------------------------------------------------------------------------
class FakePipeline:
    def __init__(self):
        self.warmed = []

    def warm(self, req, answer, scope):
        self.warmed.append(answer)
        return (f"id{len(self.warmed)}", "ready") if answer != "skip" else (None, "refused")


def test_warm_all_reports_each_entry():
    items = [{"tenant": "t", "session_id": None, "messages": [{"role": "user", "content": f"q{i}"}],
              "answer": "skip" if i == 2 else f"a{i}", "scope": "global"} for i in range(5)]
    calls = []
    results = warm_all(FakePipeline(), items, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]
    assert [r["cache_id"] for r in results] == ["id1", "id2", None, "id4", "id5"]
    assert warm_all(FakePipeline(), items) == results          # no callback: the same work


def test_replay_request_counter_never_goes_backwards_across_threads():
    calls = []
    on_request = _request_counter(lambda done, total: calls.append((done, total)), 8 * 50)
    threads = [threading.Thread(target=lambda: [on_request() for _ in range(50)]) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [done for done, _ in calls] == list(range(1, 401))
    assert {total for _, total in calls} == {400}


def test_index_rebuild_reports_the_entries_it_indexes(tmp_path):
    dim = 8
    store = open_store(None, None, tmp_path, StoreConfig(ready_delay_s=0, dim=dim), migrate=True)
    try:
        rng = np.random.default_rng(0)
        for i in range(3):
            v = rng.standard_normal(dim).astype(np.float32)
            store.write(NewEntry(tenant="acme", session_id=f"s{i}", vector=v / np.linalg.norm(v),
                                 tags={"intent_domain": "general"}, answer_text=f"answer {i}",
                                 system_prompt_version="v1", context_fingerprint="v1:general", state="ready"))
        calls = []
        rows = store.rebuild_index(progress=lambda done, total: calls.append((done, total)))
        assert rows == 3 and len(store.index) == 3
        assert calls == [(3, 3)]
    finally:
        store.close()


# ---- the bar ------------------------------------------------------------------------------------------------
def test_bar_is_off_without_a_terminal(capsys):
    with ProgressBar("job", "items") as bar:
        assert not bar.live                  # pytest's stderr is no terminal
        for done in range(1, 4):
            bar(done, 3)
        bar.echo("result line")
    out, err = capsys.readouterr()
    assert out == "result line\n" and err == ""


def test_force_color_in_ci_draws_no_bar(capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")            # rich alone would call the captured stderr a terminal
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    with ProgressBar("replay", "requests") as bar:
        assert not bar.live
        bar(1, 1)
    assert capsys.readouterr().err == ""


def test_plain_lines_without_a_terminal_and_none_with_no_progress(capsys):
    with ProgressBar("eval", "cases", plain_every=2) as bar:
        for done in range(1, 6):
            bar(done, 5)
    assert capsys.readouterr().err == "  2/5 cases\n  4/5 cases\n  5/5 cases\n"
    with ProgressBar("eval", "cases", enabled=False, plain_every=2) as bar:
        for done in range(1, 6):
            bar(done, 5)
    assert capsys.readouterr().err == ""


def test_bar_on_a_terminal_draws_on_stderr_only(capsys, monkeypatch):
    monkeypatch.setenv("TTY_COMPATIBLE", "1")         # rich: treat the captured stderr as a terminal
    with ProgressBar("models prepare", "steps") as bar:
        assert bar.live
        bar(0, 2)
        bar(1, 2)
        bar.echo("model demo: built in")
        bar(2, 2)
        bar.echo("pair model: ready")
    out, err = capsys.readouterr()
    assert out == "model demo: built in\npair model: ready\n"      # stdout holds the job's lines, nothing else
    assert "2/2" in err and "steps" in err


# ---- semcache stats -----------------------------------------------------------------------------------------
class StatsHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/admin/stats":
            self._send(404, {"error": {"message": "not found"}})
        elif self.headers.get("authorization") != f"Bearer {TOKEN}":
            self._send(401, {"error": {"message": "invalid admin token", "code": "invalid_admin_token"}})
        else:
            self._send(200, STATS)

    def _send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):          # keep the test output clean
        pass


@pytest.fixture
def stats_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), StatsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_stats_prints_a_summary(stats_server, capsys):
    assert main(["stats", "--url", stats_server, "--admin-token", TOKEN]) == 0
    out, err = capsys.readouterr()
    assert "hit rate 76.4%" in out and "partial rate 3.6%" in out and "precision proxy 99.2%" in out
    assert "uptime 01:02:03" in out and "cache pollution 6" in out
    assert "prefill 123,456" in out and "decode 65,432" in out
    assert "ready 410" in out and "breaker: closed" in out and "database up, redis not used" in out
    assert "replica-alpha:8001" in out and "replica-beta:8001" in out and "ejected" in out
    assert "50.0%" in out                                      # alpha's cached share
    assert "total" in out and "encode" in out                  # decision latency stages
    assert "Traceback" not in err


def test_stats_token_from_the_environment(stats_server, capsys, monkeypatch):
    monkeypatch.setenv("SEMCACHE_ADMIN_TOKEN", TOKEN)
    assert main(["stats", "--url", stats_server + "/"]) == 0
    assert "hit rate 76.4%" in capsys.readouterr().out


def test_stats_wrong_token_is_one_line_and_exit_2(stats_server, capsys, monkeypatch):
    monkeypatch.delenv("SEMCACHE_ADMIN_TOKEN", raising=False)
    assert main(["stats", "--url", stats_server, "--admin-token", "wrong"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("semcache: error: ") and "401" in err
    assert "Traceback" not in err


def test_stats_unreachable_gateway_is_one_line_and_exit_2(capsys):
    server = ThreadingHTTPServer(("127.0.0.1", 0), StatsHandler)
    port = server.server_address[1]
    server.server_close()                                      # nothing listens there now
    assert main(["stats", "--url", f"http://127.0.0.1:{port}", "--admin-token", TOKEN]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "cannot reach" in err and "Traceback" not in err


def test_stats_plain_report_without_rich(capsys):
    from gateway.stats_report import _print_plain
    import sys
    _print_plain(STATS, "http://gw:8000", sys.stdout)
    out = capsys.readouterr().out
    assert "hit rate 76.4%" in out and "replica-beta:8001" in out and "replicas:" in out
