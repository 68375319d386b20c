"""What stands between a tool and a hostile repository: walking, wildcards, ignore rules, text
reading, the ripgrep process and key files. Only tools/ imports these."""

__all__: list[str] = []
