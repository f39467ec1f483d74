"""Table 6 of Dodge et al. as published: each method's test hits@k on the four Movie Dialog tasks, the figures our
reproduction is printed beside, and the k the paper scores each task with."""

from __future__ import annotations

TASK_TITLES = {1: "QA task", 2: "Recs task", 3: "QA+Recs task", 4: "Reddit task"}

# The paper's k per task: hits@1 for QA, hits@100 for recommendation, hits@10 for QA+recommendation and discussion.
PAPER_K = {1: 1, 2: 100, 3: 10, 4: 10}

# Table 6 of the paper: row -> test hits@k per task (None: not applicable). Its rows are the registered titles.
PAPER_TABLE6: dict[str, tuple[float | None, ...]] = {
    "QA system": (90.7, None, None, None), "SVD": (None, 19.2, None, None), "IR": (None, None, None, 23.7),
    "LSTM": (6.5, 27.1, 19.9, 11.8), "Supervised embeddings": (50.9, 29.2, 65.9, 27.6),
    "MemN2N": (79.3, 28.6, 81.7, 29.2), "Joint supervised embeddings": (43.6, 28.1, 58.9, 14.5),
    "Joint MemN2N": (83.5, 26.5, 78.9, 26.6),
}
