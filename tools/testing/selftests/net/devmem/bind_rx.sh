#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The bind-rx tests. Run last: their fault injection test can leave the
# DMA-API debug code without memory, which then turns itself off.
exec "$(dirname "$0")"/bind_rx
