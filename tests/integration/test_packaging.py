"""The wheel as the Docker image builds it: from exactly the files the Dockerfile copies, installed into a
fresh venv, and run from outside the source tree (so nothing of the checkout is importable) against a
throwaway PostgreSQL database: `semcache migrate`, then `semcache serve` with the embedded demo engine,
checked with /readyz and a chat completion through the official openai client. And migrate-on-start:
`serve` comes up on a fresh database without `semcache migrate`, and `serve --no-migrate` refuses an
unmigrated one with a one-line error (exit status 2) that says what to run.

Nothing is downloaded: the wheel is built without build isolation (the dev venv's setuptools), and the fresh
venv sees the dev venv's site-packages through a .pth file, so `pip install --no-deps` adds only the wheel.
"""
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import openai
import pytest

from tests import services
from tests.conftest import ROOT, free_port, models_dir, throwaway_database

HEAD_REVISIONS = sorted(p.name.split("_")[0] for p in (ROOT / "migrations" / "versions").glob("[0-9]*.py"))


def dockerfile_copies() -> list[str]:
    """The source paths of the Dockerfile's COPY instructions (relative to the build context)."""
    sources = []
    for line in (ROOT / "Dockerfile").read_text().replace("\\\n", " ").splitlines():
        if line.strip().upper().startswith("COPY "):
            words = shlex.split(line.strip())
            args = [w for w in words[1:] if not w.startswith("--")]
            sources += args[:-1]
    return sources


def setuptools_is_recent() -> bool:
    """setuptools >= 77 (what pyproject's build-system asks for: PEP 639 license fields) in this venv."""
    try:
        from importlib.metadata import version
        return int(version("setuptools").split(".")[0]) >= 77
    except Exception:             # noqa: BLE001 - not installed
        return False


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the wheel, the fresh venv's bin folder, a working folder outside the repo)."""
    work = tmp_path_factory.mktemp("wheel")
    context = work / "context"                      # what `docker build` would see after the COPY lines
    context.mkdir()
    for source in dockerfile_copies():
        path = ROOT / source
        if path.is_dir():
            shutil.copytree(path, context / source, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, context / source)
    # the dev extra's setuptools builds it (no download); an older one would fetch a newer into an isolated env
    isolation = [] if setuptools_is_recent() else ["--use-pep517"]
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(context), "--no-deps", "-q",
                            *(isolation or ["--no-build-isolation"]), "-w", str(work / "dist")],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next((work / "dist").glob("semcache_gateway-*.whl"))

    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    fresh_site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; "
                                      "print(sysconfig.get_paths()['purelib'])"],
                                     capture_output=True, text=True, check=True).stdout.strip())
    # the dev venv's packages (torch, litestar, ...) without its editable install of this checkout: the .pth
    # files of a folder named in a .pth file are not processed, so the editable finder stays out
    dev_sites = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (fresh_site / "semcache_dev_venv.pth").write_text("\n".join(sorted(dev_sites)) + "\n")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                           "--no-deps", str(wheel)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    outside = work / "elsewhere"
    outside.mkdir()
    return wheel, venv / "bin", outside


def run_env(database: str, data_dir: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not
           (k.startswith("SEMCACHE_") and not k.startswith("SEMCACHE_TEST_") and k != "SEMCACHE_KERNELS")}
    return {**env, "SEMCACHE_DATABASE_URL": database, "SEMCACHE_BACKEND_MODEL": "demo",
            "SEMCACHE_BACKEND_URL": "embedded", "SEMCACHE_DATA_DIR": str(data_dir),
            "SEMCACHE_MODELS_DIR": models_dir(), "SEMCACHE_ENGINE_KV_CACHE_MEMORY": "64MiB",
            "SEMCACHE_ENGINE_MAX_MODEL_LEN": "1024"}


def alembic_revisions(database: str) -> list[str]:
    import psycopg
    with psycopg.connect(database, connect_timeout=5) as conn:
        return [row[0] for row in conn.execute("SELECT version_num FROM alembic_version")]


def serve_and_chat(bin_dir: Path, cwd: Path, env: dict, *extra: str) -> None:
    """`semcache serve` from the venv: /readyz answers 200, and a chat completion goes through the openai client."""
    port = free_port()
    server = services.Process([str(bin_dir / "semcache"), "serve", "--host", "127.0.0.1", "--port", str(port),
                               "--log-level", "warning", *extra], env=env, cwd=cwd, name="wheel-serve")
    try:
        server.wait_for_url(f"http://127.0.0.1:{port}/readyz", timeout=300)
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
        # greedy: the demo model is random weights, and a sampled answer ends on EOS at its first token about
        # 1.5% of the time (200 draws: 3), which failed CI once
        raw = client.chat.completions.with_raw_response.create(
            model="demo", messages=[{"role": "user", "content": "What is the capital of France?"}],
            max_tokens=8, temperature=0, extra_headers={"X-Session-Id": "wheel-test"})
        completion = raw.parse()
        assert completion.choices[0].message.content, completion
        assert completion.usage.completion_tokens > 0
        assert raw.headers["x-cache"] in ("MISS", "BYPASS"), dict(raw.headers)
    finally:
        server.stop()


def test_the_wheel_from_the_dockerfiles_files_holds_the_migrations_and_the_license(installed):
    wheel, bin_dir, outside = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("migrations/env.py", "migrations/script.py.mako", "migrations/__init__.py",
                   "backend_engine/assets/demo_tokenizer/tokenizer.json", "validator/data/risk_policy.json"):
        assert needed in names, needed
    shipped = {Path(n).name.split("_")[0] for n in names if n.startswith("migrations/versions/0")}
    assert shipped == set(HEAD_REVISIONS), (shipped, HEAD_REVISIONS)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), sorted(names)
    # run from elsewhere, the venv imports its own copy: not this checkout's
    where = subprocess.run([str(bin_dir / "python"), "-c", "import gateway, migrations, gateway.store.migrate as m; "
                            "print(gateway.__file__); print(migrations.__file__); print(m.MIGRATIONS)"],
                           cwd=outside, env=run_env("", outside), capture_output=True, text=True, check=True)
    for line in where.stdout.split():
        assert str(bin_dir.parent) in line and not line.startswith(str(ROOT) + "/"), where.stdout


def test_installed_wheel_migrates_and_serves_postgresql(installed, tmp_path):
    _, bin_dir, outside = installed
    with throwaway_database() as database:
        env = run_env(database, tmp_path / "data")
        migrate = subprocess.run([str(bin_dir / "semcache"), "migrate"], cwd=outside, env=env, capture_output=True,
                                 text=True, timeout=120)
        assert migrate.returncode == 0, migrate.stdout + migrate.stderr
        assert "upgraded to head" in migrate.stdout
        assert alembic_revisions(database) == HEAD_REVISIONS[-1:]
        serve_and_chat(bin_dir, outside, env)


def test_serve_migrates_a_fresh_database_on_start_and_no_migrate_refuses_it(installed, tmp_path):
    _, bin_dir, outside = installed
    with throwaway_database() as database:
        env = run_env(database, tmp_path / "data")
        for refused in ([str(bin_dir / "semcache"), "serve", "--no-migrate"],
                        [str(bin_dir / "semcache"), "serve"]):
            refuse_env = env if "--no-migrate" in refused else {**env, "SEMCACHE_MIGRATE_ON_START": "false"}
            done = subprocess.run([*refused, "--port", str(free_port())], cwd=outside, env=refuse_env,
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 2, done.stdout + done.stderr
            assert "Traceback" not in done.stderr and "UndefinedTable" not in done.stderr, done.stderr
            last = done.stderr.strip().splitlines()[-1]
            assert last.startswith("semcache: error: the database postgresql://") and "run `semcache migrate`" in last
            assert "revision none" in last and HEAD_REVISIONS[-1] in last, last
        assert not alembic_revisions_exist(database)
        # without `semcache migrate`: serve upgrades the fresh database itself, then serves
        serve_and_chat(bin_dir, outside, env)
        assert alembic_revisions(database) == HEAD_REVISIONS[-1:]


def alembic_revisions_exist(database: str) -> bool:
    import psycopg
    with psycopg.connect(database, connect_timeout=5) as conn:
        return conn.execute("SELECT to_regclass('alembic_version') IS NOT NULL").fetchone()[0]
