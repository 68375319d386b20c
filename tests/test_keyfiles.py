"""keyfiles: which names count as key files, and the refusal read_file gives for them."""

from __future__ import annotations

from pathlib import Path

import pytest

from course_agent.tools.guards.keyfiles import KEY_FILES, is_key_file, refusal


@pytest.mark.parametrize(
    "path",
    [".env", ".env.local", ".env.example", "deploy/.env.production", "site.pem", "tls/server.key",
     "id_rsa", "home/id_rsa.pub", "id_rsa_work", ".netrc", ".pypirc", ".ENV", "SITE.PEM",
     Path("a/.env"),
     # Below a folder named like one: ripgrep's exclusion of .env skips the folder .env/ too.
     ".env/readme.txt", "deploy.key/config", "a/.ENV.d/b/c.txt",
     # Names Windows opens as a key file: trailing dots and spaces, an NTFS stream.
     ".env.", ".env ", "id_rsa. .", ".env::$DATA", "site.pem:stream",
     # What a developer's home and repository commonly hold (issue 30 item 5).
     ".ssh/id_ed25519", "id_ed25519.pub", "id_ecdsa", "id_dsa", ".ssh/config", ".envrc",
     ".git-credentials", ".npmrc", "web/.npmrc", ".pgpass", ".aws/credentials", ".aws/config",
     ".docker/config.json"],
)  # fmt: skip
def test_key_files(path: str | Path) -> None:
    assert is_key_file(path)


@pytest.mark.parametrize(
    "path",
    ["env", "envrc.md", "env.py", "dotenv.md", "keys.py", "monkey", "pem.txt", "my_id_rsa",
     "netrc.md", "src/key.js", "", "a:b", ".envy/a.txt", "pem/a.txt", "keys/a.key.txt",
     "aws/config.py", "ssh.md", "npmrc.md", ".github/workflows/ci.yml"],
)  # fmt: skip
def test_not_key_files(path: str) -> None:
    assert not is_key_file(path)


def test_the_refusal_names_the_list_and_what_to_do_instead() -> None:
    text = refusal("config/.env")
    assert text.startswith("config/.env is a key file (.env, .env.*, .envrc, *.pem, *.key, id_rsa")
    assert all(pattern in text for pattern in KEY_FILES)
    assert "Read the code that loads the setting instead" in text
    assert refusal(".env/bin/activate").startswith(
        ".env/bin/activate is in .env/, named like one (.env, .env.*,"
    )
