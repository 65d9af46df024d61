"""sumpipe.io — atomic artifact writes and the readers that go with them.

`atomic`: atomic files and folders, folder locks, the Parquet/JSON/text writers, the readers.
"""
