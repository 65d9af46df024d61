"""The download stage and its corpora: `datasets` is the registry `data.dataset` names, one loader
module per corpus registers itself there (`pydoc_corpus`, `numerals`, `local`, `hub`)."""
