"""Natural-language templates of the banking self-play generator, written for this project.

User logical forms have at least three templates each; they are dealt into three thirds (training, development,
out-of-template tests) by a fixed shuffle, so an OOT template never realises a training dialog. The system, like
the bAbI bot, always says the same thing for the same action (its utterances are the candidates to rank).
Placeholders are slot names: {account}, {partner}, {amount}, {transaction}, {card}, {card_type}, {note}.
"""

from __future__ import annotations

import functools
import random

USER_TEMPLATES: dict[str, tuple[str, ...]] = {
    # Opening the dialog with an intent, volunteering 0..n slots (key: intent:slots sorted, "+"-joined).
    "intent:transfer:": (
        "i would like to make a transfer",
        "i need to send some money",
        "can you help me transfer money",
        "i want to wire money to someone",
        "i need to pay someone",
        "could you move some money for me",
    ),
    "intent:transfer:account": (
        "i want to send money from my {account} account",
        "please make a transfer from the {account} account",
        "i need to transfer money using my {account} account",
        "i want to pay someone from {account}",
        "send money out of my {account} account please",
        "i would like to transfer funds from {account}",
    ),
    "intent:transfer:account+amount+partner": (
        "send {amount} euros from my {account} account to {partner}",
        "i want to transfer {amount} euros to {partner} using my {account} account",
        "please wire {amount} euros to {partner} from {account}",
        "pay {partner} {amount} euros out of my {account} account",
        "i need to move {amount} euros from {account} to {partner}",
        "could you send {partner} {amount} euros from {account}",
    ),
    "intent:transfer:account+partner": (
        "i want to send money to {partner} from my {account} account",
        "please transfer some money from {account} to {partner}",
        "make a transfer to {partner} using the {account} account",
        "i want to pay {partner} from my {account} account",
        "send money to {partner} out of {account}",
        "i need to wire money to {partner} from {account}",
    ),
    "intent:transfer:account+amount": (
        "i want to send {amount} euros from my {account} account",
        "please transfer {amount} euros using {account}",
        "move {amount} euros out of my {account} account",
        "i need to pay {amount} euros from my {account} account",
        "send {amount} euros out of {account}",
        "wire {amount} euros from the {account} account",
    ),
    "intent:cancel_transfer:": (
        "i want to cancel a transfer",
        "please stop a transfer i made",
        "can you undo one of my transfers",
        "i made a transfer by mistake , cancel it",
        "i need to revoke a payment",
        "please call back a transfer",
    ),
    "intent:cancel_transfer:transaction": (
        "please cancel the transfer {transaction}",
        "i want to cancel transaction {transaction}",
        "can you stop the transfer with id {transaction}",
        "revoke the payment {transaction} please",
        "transaction {transaction} was a mistake , cancel it",
        "i need to call back transfer {transaction}",
    ),
    "intent:block_card:": (
        "i lost my card , can you block it",
        "i need to block a card",
        "please deactivate one of my cards",
        "my card was stolen",
        "i want to freeze a card",
        "someone took my card , please block it",
    ),
    "intent:block_card:card": (
        "please block the card {card}",
        "i want to block my card {card}",
        "my card {card} was stolen , block it",
        "freeze card {card} please",
        "card {card} is lost , deactivate it",
        "i need to block card number {card}",
    ),
    "intent:block_card:account": (
        "i need to block a card of my {account} account",
        "please block the card linked to {account}",
        "a card on my {account} account must be blocked",
        "freeze a card linked to my {account} account",
        "i lost a card of the {account} account",
        "deactivate the card on {account}",
    ),
    "intent:block_card:account+card_type": (
        "please block the {card_type} card of my {account} account",
        "i lost the {card_type} card linked to {account}",
        "block my {account} {card_type} card",
        "freeze the {card_type} card on {account}",
        "my {card_type} card of the {account} account was stolen",
        "deactivate the {account} {card_type} card",
    ),
    "intent:transaction_history:": (
        "i am looking for a transaction in my history",
        "can you search my past transactions",
        "i want to find an old payment",
        "i need to look up a transaction",
        "show me a payment from my history",
        "help me find a past transfer",
    ),
    "intent:transaction_history:note": (
        "find the transaction with the note {note}",
        "search my history for {note}",
        "i am looking for the payment marked {note}",
        "look up the payment with note {note}",
        "show me the {note} transaction",
        "find my {note} payment in the history",
    ),
    "intent:account_balance:": (
        "what is my balance",
        "how much money do i have",
        "i want to check my account balance",
        "how much is left on my account",
        "tell me my balance",
        "what is the money i have on my account",
    ),
    "intent:account_balance:account": (
        "what is the balance of my {account} account",
        "how much money is on {account}",
        "check the balance of the {account} account",
        "tell me the balance of {account}",
        "how much is left on my {account} account",
        "what is on my {account} account right now",
    ),
    "intent:account_limit:": (
        "what is my transfer limit",
        "how much am i allowed to transfer",
        "i want to check my account limit",
        "what is the maximum i can send",
        "tell me my limit for transfers",
        "how high is my transfer limit",
    ),
    "intent:account_limit:account": (
        "what is the limit of my {account} account",
        "how much can i transfer from {account}",
        "check the transfer limit of the {account} account",
        "tell me the limit of {account}",
        "what is the maximum i can send from my {account} account",
        "how high is the limit on {account}",
    ),
    # Answers to the system's requests.
    "inform:account": (
        "my {account} account",
        "use {account}",
        "the {account} one",
        "it is {account}",
        "from {account}",
        "the {account} account please",
    ),
    "inform:partner": (
        "to {partner}",
        "{partner}",
        "the recipient is {partner}",
        "send it to {partner}",
        "it goes to {partner}",
        "pay {partner}",
    ),
    "inform:amount": (
        "{amount} euros",
        "send {amount}",
        "make it {amount} euros",
        "the amount is {amount}",
        "{amount}",
        "i want to send {amount} euros",
    ),
    "inform:transaction": (
        "it is {transaction}",
        "{transaction}",
        "the id is {transaction}",
        "transaction {transaction}",
        "the one with id {transaction}",
        "number {transaction}",
    ),
    "inform:card": (
        "the card id is {card}",
        "{card}",
        "it is card {card}",
        "card number {card}",
        "my card is {card}",
        "the id is {card}",
    ),
    "inform:card_type": (
        "the {card_type} card",
        "my {card_type} one",
        "block the {card_type}",
        "the {card_type} one",
        "it is my {card_type} card",
        "{card_type}",
    ),
    "inform:note": (
        "the note says {note}",
        "{note}",
        "it was for {note}",
        "the note is {note}",
        "look for {note}",
        "it was marked {note}",
    ),
    "dont_know:transaction": (
        "i do not remember the id",
        "no idea what the id is",
        "i lost the transaction id",
        "i can not find the id",
        "i do not have the transaction id",
        "not sure about the id",
    ),
    "dont_know:card": (
        "i do not know the card id",
        "i can not remember the number",
        "no idea what the card id is",
        "i do not have the card id",
        "i forgot the card number",
        "not sure about the card id",
    ),
    "affirm": ("yes", "yes please", "sure", "okay", "yes i would", "right"),
    "thanks": (
        "thank you",
        "thanks a lot , bye",
        "great , thanks",
        "thanks , that is all",
        "perfect , thank you",
        "that is all , bye",
    ),
}
# Joining two realised user utterances for the compound turns of the challenge sets.
JOINERS = {"affirm_inform": "{first} , {second}", "inform_inform": "{first} and {second}"}

SLOT_WORDS = {
    "account": "account",
    "partner": "partner name",
    "amount": "amount",
    "transaction": "transaction id",
    "card": "card id",
    "card_type": "card type",
    "note": "note",
}
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
    **{
        f"change:{slot}": f"the {words} you gave is not valid , would you like to change it ?"
        for slot, words in SLOT_WORDS.items()
    },
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


@functools.cache
def template_thirds(seed: int = TEMPLATE_SEED) -> dict[str, dict[str, tuple[str, ...]]]:
    """form -> template split (trn, dev, OOT) -> its templates: each form's templates shuffled, dealt in turn."""
    rng = random.Random(seed)
    thirds: dict[str, dict[str, tuple[str, ...]]] = {}
    for form, templates in sorted(USER_TEMPLATES.items()):
        order = list(templates)
        rng.shuffle(order)
        thirds[form] = {split: tuple(order[i::3]) for i, split in enumerate(TEMPLATE_SPLITS)}
    return thirds
