"""The restaurant simulator of Bordes et al. (section 3.1): the two KBs, the user and bot patterns, the simulator
of tasks 1-5 and the corpus generation (in this process or through Beam)."""
