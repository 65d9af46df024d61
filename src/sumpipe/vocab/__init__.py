"""sumpipe.vocab"""
