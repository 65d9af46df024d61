"""sumpipe.train"""
