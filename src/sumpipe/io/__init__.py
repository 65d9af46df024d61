"""sumpipe.io — files, one concern per module (import from the module that says what you need).

`atomic`: atomic files and folders, folder locks, the Parquet/JSON/text writers and the artifact readers.
`bookkeeping`: the paths sumpipe keeps for itself (locks, checkpoints, timings): checked up front, opened safely.
`userfiles`: files given by the user (JSON Lines, Parquet, .gz), read within `sumpipe.inputs`' limits.
`text`: text from bytes: the encoding (byte order marks), repairs counted, lines as Python splits them.
`native`: what Arrow's and safetensors' native code needs: UTF-8 paths, refused writes as OSError.
`weights`: safetensors weights written reproducibly, tensor shapes from a file's header.
"""
