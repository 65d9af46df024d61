"""sumpipe.models"""
