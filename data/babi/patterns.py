"""Natural-language patterns of the restaurant simulator (section 3.1 of Bordes et al., 2017).

The user has 43 patterns, up to 4 ways to say a thing; the bot always says a thing the same way. The paper
counts 20 bot patterns, but a candidate set of 4,212 (its Table 1) is exactly what 16 patterns produce over the
two KBs: 12 fixed utterances + 600 API calls + 3 x 1,200 restaurant-specific ones. We keep the 16 the policy
needs. Placeholders are ``{cuisine}``, ``{location}``, ``{party_size}``, ``{price}`` and ``{restaurant}``.
"""

from __future__ import annotations

USER_PATTERNS: dict[str, tuple[str, ...]] = {
    "greeting": ("hi", "hello", "good morning"),
    # A request is an opener followed by the phrases of the fields given up front, in random order.
    "request": ("can you book a table", "i'd like to book a table", "may i have a table"),
    "request_cuisine": ("with {cuisine} food",),
    "request_location": ("in {location}",),
    "request_party_size": ("for {party_size} people",),
    "request_price": ("in a {price} price range",),
    "answer_cuisine": ("i love {cuisine} food", "with {cuisine} food please", "{cuisine} cuisine"),
    "answer_location": ("{location} please", "in {location}", "i'd like it in {location}"),
    "answer_party_size": ("we will be {party_size}", "for {party_size} people please", "{party_size} people"),
    "answer_price": ("in a {price} price range please", "i am looking for a {price} restaurant",
                     "a {price} place would be nice"),
    "update_cuisine": ("instead could it be with {cuisine} food", "actually i would prefer with {cuisine} food"),
    "update_location": ("instead could it be in {location}", "actually i would prefer in {location}"),
    "update_party_size": ("instead could it be for {party_size} people",
                          "actually i would prefer for {party_size} people"),
    "update_price": ("instead could it be in a {price} price range",
                     "actually i would prefer in a {price} price range"),
    "no_more_updates": ("no",),
    "reject_option": ("no this does not work for me", "do you have something else"),
    "accept_option": ("let's do it", "that looks great"),
    "book_restaurant": ("can you book a table at {restaurant}",),
    "ask_phone": ("what is the phone number of the restaurant", "may i have the phone number of the restaurant"),
    "ask_address": ("do you have its address", "can you provide the address"),
    "thanks": ("thanks", "you rock"),
    "no_thanks": ("no thanks",),
}

BOT_GREETING = "hello what can i help you with today"
BOT_ON_IT = "i'm on it"
BOT_QUESTIONS: dict[str, str] = {
    "cuisine": "any preference on a type of cuisine",
    "location": "where should it be",
    "party_size": "how many people would be in your party",
    "price": "which price range are looking for",
}
BOT_LOOKING = "ok let me look into some options for you"
BOT_ANYTHING_TO_UPDATE = "sure is there anything else to update"
BOT_OPTION = "what do you think of this option: {restaurant}"
BOT_OTHER_OPTION = "sure let me find an other option for you"
BOT_BOOKING = "great let me do the reservation"
BOT_PHONE = "here it is {phone}"
BOT_ADDRESS = "here it is {address}"
BOT_ANYTHING_ELSE = "is there anything i can help you with"
BOT_WELCOME = "you're welcome"
# API calls ("api_call cuisine location party_size price") are the 16th pattern; see restaurant_kb.Request.

BOT_FIXED: tuple[str, ...] = (
    BOT_GREETING, BOT_ON_IT, *BOT_QUESTIONS.values(), BOT_LOOKING, BOT_ANYTHING_TO_UPDATE, BOT_OTHER_OPTION,
    BOT_BOOKING, BOT_ANYTHING_ELSE, BOT_WELCOME,
)
BOT_TEMPLATED: tuple[str, ...] = (BOT_OPTION, BOT_PHONE, BOT_ADDRESS)


def user_pattern_count() -> int:
    return sum(len(ways) for ways in USER_PATTERNS.values())


def bot_pattern_count() -> int:
    return len(BOT_FIXED) + len(BOT_TEMPLATED) + 1  # + the API call
