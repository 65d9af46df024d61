"""sumpipe.io — atomic artifact writes and the readers that go with them.

`atomic`: atomic files and folders, folder locks, the Parquet/JSON/text writers, the readers.
`native`: what Arrow's and safetensors' native code needs: UTF-8 paths, refused writes as OSError.
`weights`: safetensors weights written reproducibly, tensor shapes from a file's header.
"""
