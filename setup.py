"""For Beam's ``--setup_file`` (which takes a file named setup.py): a remote runner's workers (Dataflow, Flink,
Spark) install the project from it, so the custom ExampleGen, the TFMA metrics and extractors, and the generators'
renderers import there. The metadata is pyproject.toml's."""

from setuptools import setup

setup()
