"""Natural-language templates of the banking self-play generator, written for this project.

User logical forms have at least three templates each; they are dealt into three thirds (training, development,
out-of-template tests) by a fixed shuffle, so an OOT template never realises a training dialog. The system, like
the bAbI bot, always says the same thing for the same action (its utterances are the candidates to rank).
Placeholders are slot names: {account}, {partner}, {amount}, {transaction}, {card}, {card_type}, {note}.
"""

from __future__ import annotations

import random

USER_TEMPLATES: dict[str, tuple[str, ...]] = {
    # Opening the dialog with an intent, volunteering 0..n slots (key: intent:slots sorted, "+"-joined).
    "intent:transfer:": (
        "i would like to make a transfer", "i need to send some money", "can you help me transfer money",
        "i want to wire money to someone"),
    "intent:transfer:account": (
        "i want to send money from my {account} account", "please make a transfer from the {account} account",
        "i need to transfer money using my {account} account"),
    "intent:transfer:account+amount+partner": (
        "send {amount} euros from my {account} account to {partner}",
        "i want to transfer {amount} euros to {partner} using my {account} account",
        "please wire {amount} euros to {partner} from {account}"),
    "intent:transfer:account+partner": (
        "i want to send money to {partner} from my {account} account",
        "please transfer some money from {account} to {partner}",
        "make a transfer to {partner} using the {account} account"),
    "intent:transfer:account+amount": (
        "i want to send {amount} euros from my {account} account",
        "please transfer {amount} euros using {account}", "move {amount} euros out of my {account} account"),
    "intent:cancel_transfer:": (
        "i want to cancel a transfer", "please stop a transfer i made", "can you undo one of my transfers"),
    "intent:cancel_transfer:transaction": (
        "please cancel the transfer {transaction}", "i want to cancel transaction {transaction}",
        "can you stop the transfer with id {transaction}"),
    "intent:block_card:": (
        "i lost my card , can you block it", "i need to block a card", "please deactivate one of my cards"),
    "intent:block_card:card": (
        "please block the card {card}", "i want to block my card {card}", "my card {card} was stolen , block it"),
    "intent:block_card:account": (
        "i need to block a card of my {account} account", "please block the card linked to {account}",
        "a card on my {account} account must be blocked"),
    "intent:block_card:account+card_type": (
        "please block the {card_type} card of my {account} account",
        "i lost the {card_type} card linked to {account}", "block my {account} {card_type} card"),
    "intent:transaction_history:": (
        "i am looking for a transaction in my history", "can you search my past transactions",
        "i want to find an old payment"),
    "intent:transaction_history:note": (
        "find the transaction with the note {note}", "search my history for {note}",
        "i am looking for the payment marked {note}"),
    "intent:account_balance:": (
        "what is my balance", "how much money do i have", "i want to check my account balance"),
    "intent:account_balance:account": (
        "what is the balance of my {account} account", "how much money is on {account}",
        "check the balance of the {account} account"),
    "intent:account_limit:": (
        "what is my transfer limit", "how much am i allowed to transfer", "i want to check my account limit"),
    "intent:account_limit:account": (
        "what is the limit of my {account} account", "how much can i transfer from {account}",
        "check the transfer limit of the {account} account"),
    # Answers to the system's requests.
    "inform:account": ("my {account} account", "use {account}", "the {account} one", "it is {account}"),
    "inform:partner": ("to {partner}", "{partner}", "the recipient is {partner}", "send it to {partner}"),
    "inform:amount": ("{amount} euros", "send {amount}", "make it {amount} euros", "the amount is {amount}"),
    "inform:transaction": ("it is {transaction}", "{transaction}", "the id is {transaction}"),
    "inform:card": ("the card id is {card}", "{card}", "it is card {card}"),
    "inform:card_type": ("the {card_type} card", "my {card_type} one", "block the {card_type}"),
    "inform:note": ("the note says {note}", "{note}", "it was for {note}"),
    "dont_know:transaction": ("i do not remember the id", "no idea what the id is", "i lost the transaction id"),
    "dont_know:card": ("i do not know the card id", "i can not remember the number", "no idea what the card id is"),
    "affirm": ("yes", "yes please", "sure", "okay"),
    "thanks": ("thank you", "thanks a lot , bye", "great , thanks"),
}
# Joining two realised user utterances for the compound turns of the challenge sets.
JOINERS = {"affirm_inform": "{first} , {second}", "inform_inform": "{first} and {second}"}

SLOT_WORDS = {"account": "account", "partner": "partner name", "amount": "amount", "transaction": "transaction id",
              "card": "card id", "card_type": "card type", "note": "note"}
SYSTEM_UTTERANCES: dict[str, str] = {
    "greet": "hello , how can i help you today ?",
    "request:account": "which account would you like to use ?",
    "request:account:block_card": "which account does the card belong to ?",
    "request:partner": "who would you like to send the money to ?",
    "request:partner:cancel_transfer": "who did you send the money to ?",
    "request:amount": "how much money would you like to send ?",
    "request:transaction": "what is the id of the transaction you want to cancel ?",
    "request:card": "please enter the card id .",
    "request:card_type": "which card would you like to block ?",
    "request:note": "what is the note of the transaction you are looking for ?",
    **{f"change:{slot}": f"the {words} you gave is not valid , would you like to change it ?"
       for slot, words in SLOT_WORDS.items()},
    "too_many": "sorry , there were too many invalid answers . please contact your branch .",
    "done:transfer:success": "your transfer has been made .",
    "done:transfer:failed": "sorry , the transfer could not be made .",
    "done:cancel_transfer:success": "your transfer has been cancelled .",
    "done:cancel_transfer:failed": "sorry , the transfer could not be cancelled .",
    "done:block_card:success": "your card has been blocked .",
    "done:block_card:failed": "sorry , the card could not be blocked .",
    "done:transaction_history:success": "here are your transactions with the note {note} .",
    "done:transaction_history:failed": "sorry , i could not search your transactions right now .",
    "done:account_balance:success": "the balance of your {account} account is {balance} euros .",
    "done:account_balance:failed": "sorry , i could not get your balance right now .",
    "done:account_limit:success": "the transfer limit of your {account} account is {limit} euros .",
    "done:account_limit:failed": "sorry , i could not get your limit right now .",
}
TEMPLATE_SPLITS = ("trn", "dev", "OOT")
TEMPLATE_SEED = 20190801


def template_thirds(seed: int = TEMPLATE_SEED) -> dict[str, dict[str, tuple[str, ...]]]:
    """form -> template split (trn, dev, OOT) -> its templates: each form's templates shuffled, dealt in turn."""
    rng = random.Random(seed)
    thirds: dict[str, dict[str, tuple[str, ...]]] = {}
    for form, templates in sorted(USER_TEMPLATES.items()):
        order = list(templates)
        rng.shuffle(order)
        thirds[form] = {split: tuple(order[i::3]) for i, split in enumerate(TEMPLATE_SPLITS)}
    return thirds
