"""The banking domain of the self-play generator (Majumdar et al.): intents, slots, user profiles and the API.

Every slot value of a dialog comes from its user profile: the accounts the user holds (with balance and
transfer limit), the partners money can go to, the cards of each account and past transactions. The user bot may
also say values that are not in the profile (drawn from the same pools), which the API rejects.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# Intents, and the slots the system fills, in its strict order; an alternative path for two of them.
INTENTS = ("transfer", "cancel_transfer", "block_card", "transaction_history", "account_balance", "account_limit")
SLOTS: dict[str, tuple[str, ...]] = {
    "transfer": ("account", "partner", "amount"),
    "cancel_transfer": ("transaction",),
    "block_card": ("card",),
    "transaction_history": ("note",),
    "account_balance": ("account",),
    "account_limit": ("account",),
}
# When the user cannot recall the main slot: the slots asked instead.
ALTERNATIVE_SLOTS: dict[str, tuple[str, ...]] = {
    "cancel_transfer": ("partner", "transaction"),
    "block_card": ("account", "card_type"),
}

ACCOUNTS = ("checking", "savings", "joint", "business", "student", "deposit")
PARTNERS = ("megan", "michael", "anna", "luca", "sofia", "james", "emma", "omar", "chloe", "david", "nina",
            "pietro", "sara", "tom", "yuki", "hannah", "marco", "lena", "victor", "irene")
CARD_TYPES = ("credit", "debit", "prepaid")
NOTES = ("salary", "rent", "groceries", "electricity", "insurance", "gym", "holiday", "school", "phone", "dinner")
AMOUNTS = tuple(str(a) for a in (20, 50, 75, 100, 150, 200, 250, 300, 400, 500, 750, 1000, 1500, 2000, 3000))
# Closed pools, so that test dialogs use entities training has seen (the paper leaves OOV aside).
BALANCES = tuple(str(b) for b in range(250, 10001, 250))
TRANSACTION_IDS = tuple(f"tx_{n}" for n in range(4100, 4160))
CARD_IDS = tuple(f"card_{n}" for n in range(7200, 7260))


@dataclass(frozen=True)
class Card:
    id: str
    account: str
    type: str


@dataclass(frozen=True)
class Transaction:
    id: str
    partner: str
    amount: str
    note: str


@dataclass(frozen=True)
class UserProfile:
    accounts: tuple[str, ...]
    balances: dict[str, str]
    limits: dict[str, str]
    partners: tuple[str, ...]
    cards: tuple[Card, ...]
    transactions: tuple[Transaction, ...]

    def cards_of(self, account: str) -> list[Card]:
        return [card for card in self.cards if card.account == account]

    def transactions_with(self, partner: str) -> list[Transaction]:
        return [t for t in self.transactions if t.partner == partner]


def sample_profile(rng: random.Random) -> UserProfile:
    accounts = tuple(rng.sample(ACCOUNTS, rng.randint(2, 3)))
    limits = {a: rng.choice(AMOUNTS[6:]) for a in accounts}
    balances = {a: rng.choice(BALANCES) for a in accounts}
    partners = tuple(rng.sample(PARTNERS, rng.randint(2, 4)))
    kinds = [(account, kind) for account in accounts for kind in rng.sample(CARD_TYPES, rng.randint(1, 2))]
    cards = [Card(card_id, account, kind) for card_id, (account, kind) in zip(rng.sample(CARD_IDS, len(kinds)), kinds,
                                                                              strict=True)]
    transactions = tuple(Transaction(tx_id, rng.choice(partners), rng.choice(AMOUNTS), rng.choice(NOTES))
                         for tx_id in rng.sample(TRANSACTION_IDS, rng.randint(2, 4)))
    return UserProfile(accounts, balances, limits, partners, tuple(cards), transactions)


def valid_values(profile: UserProfile, slot: str, filled: dict[str, str]) -> list[str]:
    """The values of ``slot`` the API accepts for this profile, given the slots already filled."""
    if slot == "account":
        return list(profile.accounts)
    if slot == "partner":
        return list(profile.partners)
    if slot == "amount":  # within the account's limit; before the account is known (reordering), any account's
        limits = [profile.limits[filled["account"]]] if filled.get("account") in profile.limits else \
            profile.limits.values()
        return [a for a in AMOUNTS if int(a) <= max(int(limit) for limit in limits)]
    if slot == "transaction":
        if "partner" in filled:
            return [t.id for t in profile.transactions_with(filled["partner"])]
        return [t.id for t in profile.transactions]
    if slot == "card":
        return [c.id for c in profile.cards]
    if slot == "card_type":
        return [c.type for c in profile.cards_of(filled.get("account", ""))]
    if slot == "note":
        return sorted({t.note for t in profile.transactions})
    raise KeyError(f"unknown slot {slot!r}")


def invalid_values(profile: UserProfile, slot: str, filled: dict[str, str]) -> list[str]:
    """Values of the slot's pool the API rejects (a transaction or card id the user does not have, ...)."""
    pools = {"account": ACCOUNTS, "partner": PARTNERS, "amount": AMOUNTS, "card_type": CARD_TYPES, "note": NOTES,
             "transaction": TRANSACTION_IDS, "card": CARD_IDS}
    valid = set(valid_values(profile, slot, filled))
    return [v for v in pools[slot] if v not in valid]
