"""``python -m pipeline.cli``: the ``dialog`` command."""

from pipeline.cli import main

if __name__ == "__main__":  # imported, not run, when the Makefile compiles every module
    main()
