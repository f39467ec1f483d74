"""The template ranker: which kind of answer (its template), then which entities fill it, both learned.

MemN2N on task 6 (DSTC2) spends most of its mistakes on entities: it picks "The phone number of X is X_phone"
for the wrong X, or offers a restaurant that is not the best-rated result. This ranker separates the two
decisions, both learned from the training dialogs, with no rule written per response:

1. **Lexicon.** Entity words and their types come from the KB facts (KB file and the training dialogs' KB result
   lines) and from API-call arguments (a position takes the type most of its known values have).
2. **Template.** Every candidate is delexicalised (entity words become ``<type>``); a MemN2N (the project's own,
   same featurisation and training loop) ranks templates given the delexicalised history.
3. **Filling.** Among the candidates of the chosen template, a small network scores each candidate from generic
   features of its entity values in the dialog so far (said in the last user turn, by the user or the bot and
   how recently, in the last API call, among the latest results and their rating rank, the best result not yet
   offered, the restaurant on offer and its attributes, an attribute of the candidate's own restaurant). It is
   trained with softmax cross-entropy over the candidates of the gold template.

Modules: :mod:`.lexicon` (entity types, delexicalised examples), :mod:`.filling` (the filling features in Python,
the filler network and its batches), :mod:`.graph` (the same in TensorFlow ops: the servable module),
:mod:`.ranker` (training, and the ranker the tables use).
"""
