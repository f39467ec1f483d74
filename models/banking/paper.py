"""Tables 8 and 9 of Majumdar et al. as published, the figures our reproduction is printed beside, and the titles
of their rows."""

from __future__ import annotations

from data.banking.labels import NONE

CHALLENGE_TITLES = {NONE: "Non OOP", "turn_compression": "Turn Comp.", "new_api": "New API",
                    "reordering": "Reordering", "another_slot": "Another Slot", "audit_more": "Audit More"}
# Table 8 (IT SMN, IT MMN, OOT SMN, OOT MMN) and Table 9 (SMN, MMN) of the paper.
PAPER_TABLE8 = {NONE: (88.62, 90.17, 87.39, 88.27), "turn_compression": (27.80, 55.00, 27.90, 54.70),
                "new_api": (7.42, 7.83, 8.17, 6.67), "reordering": (54.50, 45.50, 54.00, 41.50),
                "another_slot": (38.00, 25.00, 41.50, 27.50), "audit_more": (15.50, 34.00, 16.00, 35.00),
                "average": (28.64, 33.47, 29.51, 33.07)}
PAPER_TABLE9 = {("turn_compression", "IT"): (29.61, 55.16), ("turn_compression", "OOT"): (29.07, 55.13),
                ("audit_more", "IT"): (10.50, 15.02), ("audit_more", "OOT"): (10.90, 15.43)}
