"""sumpipe.report"""
