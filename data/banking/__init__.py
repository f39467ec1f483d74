"""The banking self-play corpus of Majumdar et al.: the domain, the finite-state bots, the templates, the
generation, and the labels sidecar (``labels``, read without importing the generator)."""
