"""sumpipe.data"""
