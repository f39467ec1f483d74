"""The restaurant knowledge bases of section 3.1 of Bordes et al. (2017).

Ten cuisines and ten locations are split in halves into two KBs that share only price ranges, ratings and party
sizes. Each KB holds one restaurant per (cuisine, location, price range, rating): 5 x 5 x 3 x 8 = 600 restaurants,
seven facts each (4,200 facts). A restaurant takes a single party size (2, 4, 6 or 8), drawn from the seed.
The first KB serves train, dev and test dialogs; the second only the out-of-vocabulary (OOV) test sets.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from data.corpus import KBFact

CUISINES = ("british", "french", "indian", "italian", "spanish",
            "cantonese", "japanese", "korean", "thai", "vietnamese")
LOCATIONS = ("bombay", "london", "madrid", "paris", "rome",
             "bangkok", "beijing", "hanoi", "seoul", "tokyo")
PRICES = ("cheap", "moderate", "expensive")
PARTY_SIZES = ("two", "four", "six", "eight")
RATINGS = tuple(range(1, 9))
FIELDS = ("cuisine", "location", "party_size", "price")  # the order of an API call and of the bot's questions
# Fact order within a restaurant, as in the paper's attention tables.
ATTRIBUTES = ("R_phone", "R_address", "R_cuisine", "R_location", "R_number", "R_price", "R_rating")


@dataclass(frozen=True, order=True)
class Request:
    """A user request: the four fields an API call needs."""

    cuisine: str
    location: str
    party_size: str
    price: str

    def api_call(self) -> str:
        return f"api_call {self.cuisine} {self.location} {self.party_size} {self.price}"


@dataclass(frozen=True)
class Restaurant:
    cuisine: str
    location: str
    price: str
    rating: int
    party_size: str

    @property
    def name(self) -> str:
        return f"resto_{self.location}_{self.price}_{self.cuisine}_{self.rating}stars"

    @property
    def phone(self) -> str:
        return f"{self.name}_phone"

    @property
    def address(self) -> str:
        return f"{self.name}_address"

    @property
    def request(self) -> Request:
        """The request whose API call returns this restaurant (among others)."""
        return Request(self.cuisine, self.location, self.party_size, self.price)

    def facts(self) -> list[KBFact]:
        values = (self.phone, self.address, self.cuisine, self.location, self.party_size, self.price,
                  str(self.rating))
        return [KBFact(self.name, attribute, value) for attribute, value in zip(ATTRIBUTES, values, strict=True)]


@dataclass(frozen=True)
class RestaurantKB:
    """One of the two KBs: its cuisines and locations, and its restaurants."""

    name: str
    cuisines: tuple[str, ...]
    locations: tuple[str, ...]
    restaurants: tuple[Restaurant, ...]

    def field_values(self, field_name: str) -> tuple[str, ...]:
        return {"cuisine": self.cuisines, "location": self.locations,
                "party_size": PARTY_SIZES, "price": PRICES}[field_name]

    def requests(self) -> Iterator[Request]:
        """Every request this KB can answer, in a fixed order."""
        for values in itertools.product(self.cuisines, self.locations, PARTY_SIZES, PRICES):
            yield Request(*values)

    @cached_property
    def _by_request(self) -> dict[Request, tuple[Restaurant, ...]]:
        index: dict[Request, list[Restaurant]] = {request: [] for request in self.requests()}
        for restaurant in self.restaurants:
            index[restaurant.request].append(restaurant)
        return {request: tuple(found) for request, found in index.items()}

    def query(self, request: Request) -> tuple[Restaurant, ...]:
        """The restaurants an API call returns: those matching all four fields."""
        return self._by_request.get(request, ())

    def facts(self) -> list[KBFact]:
        return [fact for restaurant in self.restaurants for fact in restaurant.facts()]


def build_kbs(seed: int) -> tuple[RestaurantKB, RestaurantKB]:
    """The in-vocabulary KB and the OOV KB. Party sizes are drawn from the seed; all else is fixed."""
    rng = random.Random(f"restaurant-kb/{seed}")
    kbs = []
    for half, name in ((slice(0, 5), "kb"), (slice(5, 10), "kb-oov")):
        cuisines, locations = CUISINES[half], LOCATIONS[half]
        restaurants = tuple(
            Restaurant(cuisine, location, price, rating, rng.choice(PARTY_SIZES))
            for location, price, cuisine, rating in itertools.product(locations, PRICES, cuisines, RATINGS)
        )
        kbs.append(RestaurantKB(name, cuisines, locations, restaurants))
    return kbs[0], kbs[1]
