"""sumpipe.text"""
