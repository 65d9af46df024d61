"""sumpipe.decode"""
