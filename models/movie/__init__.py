"""Dodge et al. (Movie Dialog): examples and hits@k, text preparation, the baselines, supervised embeddings and
MemN2N with long-term memory, the LSTM, and Table 6."""
