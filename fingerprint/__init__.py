"""Layered semantic fingerprint: normalisation, coarse tags, context view, dense vector."""
from fingerprint.encoder import TextEncoder
from fingerprint.fingerprinter import Fingerprint, Fingerprinter, Tags

__all__ = ["Fingerprint", "Fingerprinter", "Tags", "TextEncoder"]
