"""How far apart two colours look: CIELAB, CIEDE2000 and simulated colour-vision deficiency.

* ``lab(hex)``: sRGB (IEC 61966-2-1) to CIE 1976 L*a*b* under the D65 white, through CIE XYZ.
* ``delta_e(a, b)``: the CIEDE2000 colour difference ΔE00 (CIE 142-2001), computed as in
  Sharma, Wu & Dalal, "The CIEDE2000 colour-difference formula: implementation notes,
  supplementary test data, and mathematical observations", Color Research and Application
  30(1), 2005, equations (1)–(25), with k_L = k_C = k_H = 1. About 1 is a just-noticeable
  difference; colours of a chart's legend must be far more than noticeable (``THRESHOLD``).
* ``simulate(hex, deficiency)``: the colour as seen with protanopia, deuteranopia or
  tritanopia, by the matrices of Machado, Oliveira & Fernandes, "A physiologically-based model
  for simulation of color vision deficiency", IEEE TVCG 15(6), 2009 (their Table 1 at
  severity 1.0), applied to linear sRGB and clipped to the gamut.
* ``hue_angle(hex)``: the CIE LCh hue angle h_ab in degrees.

The rule the charts meet (``dashboard.figures.checks.colour_problems``):

* ``THRESHOLD`` = 15: any two categorical colours of one chart differ by ΔE00 ≥ 15 in normal
  vision. A ΔE00 of 1 is about a just-noticeable difference side by side; a legend's colours
  must be told apart when the two are far apart on a map or a slide, and named ("the other
  pink"). Okabe–Ito's purple and Tol's rose (ΔE00 12.0, "both pink") and Okabe–Ito's green and
  Tol's teal (9.6, "both teal") fail it; the twelve method colours of the two papers
  (``engine.protocols.registry``) and the palette's ``SEQUENCE`` (eleven colours and black)
  meet it, so about twelve levels of one chart get their own colour.
* ``CVD_THRESHOLD`` = 5: the same pair differs by ΔE00 ≥ 5 under each of the three simulated
  deficiencies. Dichromacy removes one axis of colour, so no palette of more than a handful of
  colours keeps 10 there; 5 is still several just-noticeable differences. Where a chart needs
  more colours than that allows, marks (symbol, dash, pattern) tell the levels apart and the
  check counts the pair as told apart only when their marks differ.
* ``HUE_FAMILY`` = 30°: compared runs or datasets (the Compare runs page, LLM vs human) never
  share a hue family: their LCh hue angles differ by at least 30° (light and dark blue have
  nearly the same angle), unless one of them is achromatic (chroma below ``ACHROMATIC``).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

THRESHOLD = 15.0
CVD_THRESHOLD = 5.0
HUE_FAMILY = 30.0
ACHROMATIC = 12.0  # C*ab below this counts as grey: it has no hue family
DEFICIENCIES = ("protan", "deutan", "tritan")

# Machado, Oliveira & Fernandes (2009), Table 1, severity 1.0: linear RGB -> linear RGB
MACHADO = {
    "protan": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                        [-0.003882, -0.048116, 1.051998]]),
    "deutan": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                        [-0.011820, 0.042940, 0.968881]]),
    "tritan": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                        [0.004733, 0.691367, 0.303900]]),
}
# linear sRGB -> CIE XYZ (D65), IEC 61966-2-1; and the D65 white of that standard
SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
WHITE_D65 = SRGB_TO_XYZ @ np.ones(3)


def rgb(hex_colour: str) -> np.ndarray:
    """``#RRGGBB`` (or ``#RGB``) as three numbers in 0–1."""
    text = str(hex_colour).strip().lstrip("#")
    if len(text) == 3:
        text = "".join(c * 2 for c in text)
    if len(text) != 6:
        raise ValueError(f"not a #RRGGBB colour: {hex_colour!r}")
    return np.array([int(text[i:i + 2], 16) / 255 for i in (0, 2, 4)])


def to_linear(values: np.ndarray) -> np.ndarray:
    """sRGB's transfer function undone (IEC 61966-2-1)."""
    values = np.asarray(values, dtype=float)
    return np.where(values <= 0.04045, values / 12.92, ((values + 0.055) / 1.055) ** 2.4)


def from_linear(values: np.ndarray) -> np.ndarray:
    values = np.clip(np.asarray(values, dtype=float), 0.0, 1.0)
    return np.where(values <= 0.0031308, 12.92 * values, 1.055 * values ** (1 / 2.4) - 0.055)


def hex_of(values: np.ndarray) -> str:
    return "#" + "".join(f"{int(round(float(v) * 255)):02X}" for v in np.clip(values, 0, 1))


def lab_of_rgb(values: np.ndarray) -> np.ndarray:
    """sRGB in 0–1 to L*a*b* (D65), by ``labs_of_rgb``."""
    return labs_of_rgb(np.asarray(values, dtype=float)[None, :])[0]


def lab(hex_colour: str) -> np.ndarray:
    return lab_of_rgb(rgb(hex_colour))


def simulate(hex_colour: str, deficiency: str) -> str:
    """The colour as a dichromat of ``deficiency`` (protan, deutan, tritan) sees it."""
    return hex_of(simulated_rgb(rgb(hex_colour), deficiency))


def simulated_rgb(values: np.ndarray, deficiency: str) -> np.ndarray:
    return from_linear(MACHADO[deficiency] @ to_linear(values))


def ciede2000(lab1, lab2) -> float:
    """ΔE00 between two L*a*b* colours (Sharma, Wu & Dalal 2005, equations 1–25; computed by
    ``ciede2000_many``, the one copy of the equations)."""
    return float(ciede2000_many(lab1, np.asarray([lab2], dtype=float))[0])


def delta_e(colour_a: str, colour_b: str, deficiency: str | None = None) -> float:
    """ΔE00 between two ``#RRGGBB`` colours, as seen in normal vision or with ``deficiency``."""
    a, b = rgb(colour_a), rgb(colour_b)
    if deficiency is not None:
        a, b = simulated_rgb(a, deficiency), simulated_rgb(b, deficiency)
    return ciede2000(lab_of_rgb(a), lab_of_rgb(b))


def worst_delta_e(colour_a: str, colour_b: str) -> dict[str, float]:
    """``{"normal": ΔE00, "protan": ..., "deutan": ..., "tritan": ...}`` of one pair."""
    out = {"normal": delta_e(colour_a, colour_b)}
    out.update({d: delta_e(colour_a, colour_b, d) for d in DEFICIENCIES})
    return out


def apart(colour_a: str, colour_b: str) -> bool:
    """True when the pair meets both thresholds (normal vision and every simulation)."""
    seen = worst_delta_e(colour_a, colour_b)
    return seen["normal"] >= THRESHOLD and all(seen[d] >= CVD_THRESHOLD for d in DEFICIENCIES)


def chroma(hex_colour: str) -> float:
    _, a, b = lab(hex_colour)
    return math.hypot(a, b)


def hue_angle(hex_colour: str) -> float:
    _, a, b = lab(hex_colour)
    return math.degrees(math.atan2(b, a)) % 360


def hue_gap(colour_a: str, colour_b: str) -> float:
    """Degrees between two colours' LCh hue angles (0–180); 180 when either is achromatic."""
    if chroma(colour_a) < ACHROMATIC or chroma(colour_b) < ACHROMATIC:
        return 180.0
    gap = abs(hue_angle(colour_a) - hue_angle(colour_b)) % 360
    return min(gap, 360 - gap)


def same_hue_family(colour_a: str, colour_b: str) -> bool:
    return hue_gap(colour_a, colour_b) < HUE_FAMILY


# ------------------------------------------------------------------------------ many at once
def labs_of_rgb(rows: np.ndarray, deficiency: str | None = None) -> np.ndarray:
    """``lab_of_rgb`` of each row of an (n, 3) array of sRGB in 0–1, as seen in normal vision
    or with ``deficiency`` (``simulated_rgb``): an (n, 3) array."""
    rows = np.asarray(rows, dtype=float)
    if deficiency is not None:
        rows = from_linear(to_linear(rows) @ MACHADO[deficiency].T)
    xyz = to_linear(rows) @ SRGB_TO_XYZ.T / WHITE_D65
    epsilon, kappa = (6 / 29) ** 3, (29 / 6) ** 2 / 3
    f = np.where(xyz > epsilon, np.cbrt(xyz), kappa * xyz + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


def ciede2000_many(lab1, labs: np.ndarray) -> np.ndarray:
    """ΔE00 between one L*a*b* colour and each row of ``labs`` (Sharma, Wu & Dalal 2005,
    equations 1–25, on arrays): an array of ΔE00."""
    l1, a1, b1 = (float(v) for v in lab1)
    labs = np.asarray(labs, dtype=float)
    l2, a2, b2 = labs[:, 0], labs[:, 1], labs[:, 2]
    c_mean = (math.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_mean ** 7 / (c_mean ** 7 + 25.0 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.where(c1p > 0, np.degrees(np.arctan2(b1, a1p)) % 360, 0.0)
    h2p = np.where(c2p > 0, np.degrees(np.arctan2(b2, a2p)) % 360, 0.0)
    both = c1p * c2p != 0
    dh_angle = h2p - h1p
    dh_angle = np.where(dh_angle > 180, dh_angle - 360, np.where(dh_angle < -180, dh_angle + 360, dh_angle))
    dh_angle = np.where(both, dh_angle, 0.0)
    dh = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh_angle / 2))
    dl, dc = l2 - l1, c2p - c1p
    l_mean, cp_mean = (l1 + l2) / 2, (c1p + c2p) / 2
    h_mean = np.where(~both, h1p + h2p,
                      np.where(np.abs(h1p - h2p) <= 180, (h1p + h2p) / 2,
                               np.where(h1p + h2p < 360, (h1p + h2p + 360) / 2, (h1p + h2p - 360) / 2)))
    t = (1 - 0.17 * np.cos(np.radians(h_mean - 30)) + 0.24 * np.cos(np.radians(2 * h_mean))
         + 0.32 * np.cos(np.radians(3 * h_mean + 6)) - 0.20 * np.cos(np.radians(4 * h_mean - 63)))
    d_theta = 30 * np.exp(-(((h_mean - 275) / 25) ** 2))
    r_c = 2 * np.sqrt(cp_mean ** 7 / (cp_mean ** 7 + 25.0 ** 7))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / np.sqrt(20 + (l_mean - 50) ** 2)
    s_c = 1 + 0.045 * cp_mean
    s_h = 1 + 0.015 * cp_mean * t
    r_t = -np.sin(np.radians(2 * d_theta)) * r_c
    return np.sqrt((dl / s_l) ** 2 + (dc / s_c) ** 2 + (dh / s_h) ** 2 + r_t * (dc / s_c) * (dh / s_h))
