"""Where connection settings come from: flags, environment, named contexts."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from qctl.cli.context import CliContext, ConfigFileError
from qctl.cli.main import app
from qctl_kit.errors import InvalidInput

CONFIG = """
default_context = "local"

[contexts.local]
dsn = "sqlite:///tmp/local.db"

[contexts.prod]
dsn = "postgresql://ops:hunter2@db.internal/app"
schema = "azync"
read_only = true
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    return path


def test_precedence(config: Path) -> None:
    default = CliContext.resolve(environ={}, config_file=config)
    assert (default.dsn, default.context_name, default.read_only) == (
        "sqlite:///tmp/local.db",
        "local",
        False,
    )
    env = CliContext.resolve(environ={"QCTL_DSN": "sqlite:///e.db"}, config_file=config)
    assert env.dsn == "sqlite:///e.db"
    prod = CliContext.resolve(
        context="prod", environ={"QCTL_DSN": "sqlite:///e.db"}, config_file=config
    )
    assert (prod.dsn, prod.schema, prod.read_only) == (
        "postgresql://ops:hunter2@db.internal/app",
        "azync",
        True,
    )
    assert "hunter2" not in prod.describe() and "***" in prod.describe()
    flag = CliContext.resolve(
        dsn="sqlite:///f.db", schema="s", environ={"QCTL_CONTEXT": "prod"}, config_file=config
    )
    assert (flag.dsn, flag.schema, flag.read_only) == ("sqlite:///f.db", "s", False)
    with pytest.raises(InvalidInput, match="--dsn and --context"):
        CliContext.resolve(dsn="sqlite:///f.db", context="prod", environ={}, config_file=config)
    by_env = CliContext.resolve(
        environ={"QCTL_CONTEXT": "prod", "QCTL_READ_ONLY": "0"}, config_file=config
    )
    assert by_env.context_name == "prod"
    assert CliContext.resolve(environ={"QCTL_READ_ONLY": "1"}, config_file=config).read_only


def test_dbos_system_database_url_as_dbos_s_cli_reads_it(config: Path) -> None:
    """After QCTL_DSN and before the default context, as an environment DSN: what DBOS's
    own CLI connects to, its SQLAlchemy driver suffix dropped."""
    dbos = {"DBOS_SYSTEM_DATABASE_URL": "postgresql+psycopg://ops@db/app_dbos_sys"}
    found = CliContext.resolve(environ=dbos, config_file=config)
    assert (found.dsn, found.context_name) == ("postgresql://ops@db/app_dbos_sys", None)
    both = CliContext.resolve(environ={**dbos, "QCTL_DSN": "sqlite:///e.db"}, config_file=config)
    assert both.dsn == "sqlite:///e.db"
    flag = CliContext.resolve(dsn="sqlite:///f.db", environ=dbos, config_file=config)
    assert flag.dsn == "sqlite:///f.db"
    named = CliContext.resolve(context="prod", environ=dbos, config_file=config)
    assert named.dsn == "postgresql://ops:hunter2@db.internal/app"


def test_a_dsn_never_takes_a_context_s_settings(tmp_path: Path) -> None:
    """A context is one unit: ``--dsn`` or ``QCTL_DSN`` points at another database, so
    the default (or ``QCTL_CONTEXT``'s) schema, system and read-only flag stay behind,
    and no context is named as the one in effect."""
    config = tmp_path / "config.toml"
    config.write_text(
        'default_context = "prod"\n[contexts.prod]\ndsn = "postgresql://db/app"\n'
        'schema = "azync"\nsystem = "azync"\nread_only = true\n'
    )
    for ctx in (
        CliContext.resolve(dsn="postgresql://other/app", environ={}, config_file=config),
        CliContext.resolve(environ={"QCTL_DSN": "postgresql://other/app"}, config_file=config),
        CliContext.resolve(
            dsn="postgresql://other/app", environ={"QCTL_CONTEXT": "prod"}, config_file=config
        ),
    ):
        assert (ctx.dsn, ctx.schema, ctx.system_name, ctx.read_only, ctx.context_name) == (
            "postgresql://other/app",
            "",
            "",
            False,
            None,
        )
        assert "read-only" not in ctx.describe()
    own = CliContext.resolve(
        dsn="postgresql://other/app",
        schema="s",
        system="dbos",
        read_only=True,
        environ={"QCTL_SCHEMA": "env"},
        config_file=config,
    )
    assert (own.schema, own.system_name, own.read_only) == ("s", "dbos", True)
    # The default context still applies whole where nothing else names a database.
    default = CliContext.resolve(environ={}, config_file=config)
    assert (default.schema, default.read_only, default.context_name) == ("azync", True, "prod")


def test_no_config_file(tmp_path: Path) -> None:
    ctx = CliContext.resolve(environ={}, config_file=tmp_path / "missing.toml")
    assert ctx.dsn is None and ctx.context_name is None
    assert "embedded default" in ctx.describe()


def test_bad_config(tmp_path: Path, config: Path) -> None:
    with pytest.raises(ConfigFileError, match="known: local, prod"):
        CliContext.resolve(context="nope", environ={}, config_file=config)
    broken = tmp_path / "broken.toml"
    broken.write_text("[contexts.x\n")
    with pytest.raises(ConfigFileError):
        CliContext.resolve(environ={}, config_file=broken)
    typed = tmp_path / "typed.toml"
    typed.write_text('[contexts.x]\nread_only = "yes"\n')
    with pytest.raises(ConfigFileError, match="read_only"):
        CliContext.resolve(context="x", environ={}, config_file=typed)


def test_cli_context_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "cfg" / "qctl"
    cfg.mkdir(parents=True)
    db = tmp_path / "ctx.db"
    (cfg / "config.toml").write_text(
        f'[contexts.mine]\ndsn = "sqlite:///{db}"\n[contexts.ro]\ndsn = "sqlite:///{db}"\n'
        "read_only = true\n"
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.delenv("QCTL_DSN", raising=False)
    runner = CliRunner()
    assert runner.invoke(app, ["--context", "mine", "db", "migrate"]).exit_code == 0
    assert db.exists()
    res = runner.invoke(app, ["--context", "ro", "jobs", "enqueue", "x"])
    assert res.exit_code == 4 and "read-only" in res.stderr
    res = runner.invoke(app, ["--context", "nope", "jobs", "list"])
    assert res.exit_code == 2 and res.stderr.startswith("qctl: error: no context 'nope'")


def test_embedded_default_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.delenv("QCTL_DSN", raising=False)
    res = CliRunner().invoke(app, ["jobs", "enqueue", "hello", "-o", "json"])
    assert res.exit_code == 0, res.stderr
    assert (tmp_path / "data" / "qctl" / "qctl.db").exists()


def test_version_and_usage() -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.startswith("qctl ")
    res = runner.invoke(app, ["jobs"])
    assert res.exit_code == 2 and "Usage" in res.stderr and res.stdout == ""
    res = runner.invoke(app, ["nosuch"])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1


def test_unavailable_database_never_prints_password() -> None:
    res = CliRunner().invoke(app, ["--dsn", "postgresql://u:s3cret@127.0.0.1:1/x", "jobs", "list"])
    assert res.exit_code == 6
    assert "s3cret" not in res.stderr and res.stderr.count("\n") == 1


def test_ctrl_c_exits_130_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(ctx: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("qctl.systems.azync.cli.options.store", interrupted)
    res = CliRunner().invoke(app, ["queues", "list"])
    assert res.exit_code == 130
    assert res.stderr.count("\n") <= 1 and "Traceback" not in res.stderr


def test_unknown_dsn_scheme_is_a_usage_error() -> None:
    res = CliRunner().invoke(app, ["--dsn", "mysql://u:pw@h/db", "jobs", "list"])
    assert res.exit_code == 2 and "unsupported DSN scheme 'mysql'" in res.stderr
    assert "pw" not in res.stderr


# --- qctl context: managing the file ------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty config home; returns the config file's path (not created yet)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    for var in ("QCTL_DSN", "QCTL_CONTEXT", "QCTL_SCHEMA", "QCTL_READ_ONLY"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path / "cfg" / "qctl" / "config.toml"


def ok(*args: str) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == 0, (args, res.stdout, res.stderr)
    return res.stdout


def test_context_add_list_use_current_delete(home: Path, tmp_path: Path) -> None:
    import json
    import stat
    import tomllib

    db = tmp_path / "local.db"
    ok("context", "add", "local", "--dsn", f"sqlite:///{db}")
    ok(
        "context", "add", "prod", "--dsn", "postgresql://ops:hun%2Fter2@db.internal/app",
        "--schema", "azync", "--system", "azync", "--read-only",
    )  # fmt: skip
    assert stat.S_IMODE(home.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.parent.stat().st_mode) == 0o700
    assert [p.name for p in home.parent.iterdir()] == ["config.toml"], "no temporary left"
    assert tomllib.loads(home.read_text())["contexts"]["prod"] == {
        "dsn": "postgresql://ops:hun%2Fter2@db.internal/app",
        "schema": "azync",
        "system": "azync",
        "read_only": True,
    }

    table = ok("context", "list")
    rows = json.loads(ok("context", "list", "-o", "json"))
    assert "hun" not in table and all("hun" not in r["dsn"] for r in rows)
    assert [(r["name"], r["current"], r["read_only"]) for r in rows] == [
        ("local", "", False),
        ("prod", "", True),
    ]
    assert rows[1]["dsn"] == "postgresql://ops:***@db.internal/app"
    assert CliRunner().invoke(app, ["context", "current"]).exit_code == 3

    ok("context", "use", "local")
    assert ok("context", "current") == "local\n"
    assert [r["current"] for r in json.loads(ok("context", "list", "-o", "json"))] == ["*", ""]
    ok("db", "migrate")  # the default context now: its file is created
    status = json.loads(ok("db", "status", "-o", "json"))
    assert status["context"] == "local" and db.exists()
    assert json.loads(ok("--context", "prod", "context", "list", "-o", "json"))[1]["current"] == "*"

    res = CliRunner().invoke(app, ["context", "delete", "local"])
    assert res.exit_code == 4, "delete confirms; off a terminal it needs --yes"
    ok("context", "delete", "local", "--dry-run")
    assert "local" in tomllib.loads(home.read_text())["contexts"]
    ok("context", "delete", "local", "--yes")
    data = tomllib.loads(home.read_text())
    assert list(data["contexts"]) == ["prod"] and "default_context" not in data


SECRET = "s3cr/t@'x %20\\y"
"""A password with every character a DSN has to encode or quote."""


@pytest.mark.parametrize(
    "dsn", ["postgresql://ops@db.internal:5432/app?sslmode=prefer", "host=db.internal user=ops"]
)
def test_context_add_takes_the_password_off_the_command_line(
    home: Path, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import stat
    import tomllib

    from qctl_kit.dsn import postgres_params

    piped = CliRunner().invoke(
        app, ["context", "add", "piped", "--dsn", dsn, "--password-stdin"], input=SECRET + "\n"
    )
    assert piped.exit_code == 0, piped.output
    monkeypatch.setattr("qctl.cli.common.stdin_is_tty", lambda: True)
    asked = CliRunner().invoke(
        app, ["context", "add", "asked", "--dsn", dsn, "--ask-password"], input=SECRET + "\n"
    )
    assert asked.exit_code == 0, asked.output
    assert stat.S_IMODE(home.stat().st_mode) == 0o600
    contexts = tomllib.loads(home.read_text())["contexts"]
    for name in ("piped", "asked"):
        stored = postgres_params(contexts[name]["dsn"])
        assert stored["password"] == SECRET and stored["user"] == "ops", name
    for said in (
        piped.output,
        asked.output,
        ok("context", "list"),
        ok("context", "list", "-o", "json"),
    ):
        assert "s3cr" not in said


def test_context_add_refuses_a_password_it_cannot_place(home: Path) -> None:
    cases = [
        (["--dsn", "sqlite:///x.db", "--password-stdin"], "SQLite file has none"),
        (
            ["--dsn", "postgresql://ops:h1dden@db/app", "--password-stdin"],
            "already holds a password",
        ),
        (["--dsn", "postgresql://ops@db/app", "--password-stdin", "--ask-password"], "not both"),
        (["--dsn", "postgresql://ops@db/app", "--ask-password"], "needs a terminal"),
        (["--dsn", "postgresql://ops@db/app", "--password-stdin"], "the password is empty"),
    ]
    for args, why in cases:
        given = "" if why == "the password is empty" else "pw\n"
        res = CliRunner().invoke(app, ["context", "add", "c", *args], input=given)
        assert res.exit_code == 2 and why in res.stderr, (args, res.output)
        assert "h1dden" not in res.stderr and res.stdout == ""
    assert not home.exists()


def test_context_add_refuses_bad_input_and_keeps_other_settings(home: Path) -> None:
    import tomllib

    home.parent.mkdir(parents=True)
    home.write_text('# mine\ntheme = "dark"\n[contexts.a]\ndsn = "sqlite:///a.db"\n')
    home.chmod(0o600)

    def fails(*args: str) -> str:
        res = CliRunner().invoke(app, list(args))
        assert res.exit_code == 2, (args, res.stdout, res.stderr)
        assert res.stderr.count("\n") == 1
        return res.stderr

    assert "exists: pass --replace" in fails("context", "add", "a", "--dsn", "sqlite:///b.db")
    err = fails("context", "add", "b", "--dsn", "postgresql://u:p/w@h/d")
    assert "malformed PostgreSQL DSN" in err and "p/w" not in err
    # What every command would refuse is refused here too, not on the context's first use.
    assert "unsupported DSN scheme 'mysql'" in fails("context", "add", "b", "--dsn", "mysql://h/d")
    err = fails("context", "add", "b", "--dsn", "postgresql://u:pw@h:notaport/d")
    assert 'invalid port "notaport"' in err and "pw" not in err
    assert "unknown system" in fails("context", "add", "b", "--dsn", "x.db", "--system", "nope")
    assert "no context 'zz'" in fails("context", "use", "zz")
    assert "no context 'zz'" in fails("context", "delete", "zz", "--yes")
    ok("context", "add", "a", "--dsn", "sqlite:///b.db", "--replace")
    data = tomllib.loads(home.read_text())
    assert data == {"theme": "dark", "contexts": {"a": {"dsn": "sqlite:///b.db"}}}


HAND_WRITTEN = """\
# qctl contexts of the ops team
theme = "dark"  # not a qctl setting: kept

# the laptop database
[contexts.local]
dsn = "sqlite:///local.db"

# production: never write from here
[contexts.prod]
dsn = "postgresql://ops@db.internal/app"
read_only = true

[plugins.pager]
command = "less -R"
"""


def test_context_edits_keep_comments_and_unknown_settings(home: Path) -> None:
    import stat

    home.parent.mkdir(parents=True)
    home.write_text(HAND_WRITTEN)
    home.chmod(0o600)
    ok("context", "use", "prod")
    assert home.read_text() == HAND_WRITTEN.replace(
        'theme = "dark"  # not a qctl setting: kept\n',
        'theme = "dark"  # not a qctl setting: kept\ndefault_context = "prod"\n',
    )
    ok("context", "use", "local")  # the same line rewritten, not a second one
    assert home.read_text().count("default_context") == 1
    assert 'default_context = "local"' in home.read_text()

    ok("context", "add", "stage", "--dsn", "sqlite:///stage.db", "--schema", "s")
    assert home.read_text().endswith(
        '[plugins.pager]\ncommand = "less -R"\n\n[contexts.stage]\ndsn = "sqlite:///stage.db"\n'
        'schema = "s"\n'
    )
    # --replace rewrites the table where it is, under its comment; the replaced
    # context's read-only flag stays unless --no-read-only says otherwise.
    ok("context", "add", "prod", "--dsn", "postgresql://ops@db2.internal/app", "--replace")
    assert (
        "# production: never write from here\n[contexts.prod]\n"
        'dsn = "postgresql://ops@db2.internal/app"\nread_only = true\n\n[plugins.pager]'
    ) in home.read_text()
    ok("context", "add", "prod", "--dsn", "postgresql://ops@db2.internal/app", "--replace")
    assert "read_only = true" in home.read_text()
    args = ["--dsn", "postgresql://ops@db2.internal/app", "--replace", "--no-read-only"]
    ok("context", "add", "prod", *args)
    assert (
        "# production: never write from here\n[contexts.prod]\n"
        'dsn = "postgresql://ops@db2.internal/app"\n\n[plugins.pager]'
    ) in home.read_text()

    # delete takes the table, its comment and the default naming it; nothing else.
    ok("context", "delete", "local", "--yes")
    assert home.read_text() == (
        '# qctl contexts of the ops team\ntheme = "dark"  # not a qctl setting: kept\n\n'
        "# production: never write from here\n[contexts.prod]\n"
        'dsn = "postgresql://ops@db2.internal/app"\n\n[plugins.pager]\ncommand = "less -R"\n\n'
        '[contexts.stage]\ndsn = "sqlite:///stage.db"\nschema = "s"\n'
    )
    assert stat.S_IMODE(home.stat().st_mode) == 0o600
    assert [p.name for p in home.parent.iterdir()] == ["config.toml"], "no temporary left"


def test_a_context_this_editor_cannot_rewrite_is_refused_untouched(home: Path) -> None:
    home.parent.mkdir(parents=True)
    inline = '[contexts]\nlocal = { dsn = "sqlite:///a.db" }  # inline\n'
    home.write_text(inline)
    home.chmod(0o600)
    res = CliRunner().invoke(app, ["context", "delete", "local", "--yes"])
    assert res.exit_code == 2
    assert "cannot edit" in res.stderr and "edit it by hand" in res.stderr
    assert home.read_text() == inline
    # Adding beside it is a plain append, which reads back right.
    ok("context", "add", "b", "--dsn", "sqlite:///b.db")
    assert home.read_text() == inline + '\n[contexts.b]\ndsn = "sqlite:///b.db"\n'
