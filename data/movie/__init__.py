"""The Movie Dialog tasks of Dodge et al.: the public-layout reader, the synthetic world and the task
generator."""
