"""sumpipe.extract"""
