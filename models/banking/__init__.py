"""Majumdar et al. (banking self-play): single and multiple memory networks, and Tables 8-9."""
