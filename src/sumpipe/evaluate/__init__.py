"""sumpipe.evaluate"""
