#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The bind-rx tests. They run after the data-path tests (TEST_PROGS order):
# their fault injection test can leave the DMA-API debug code without
# memory, which then turns itself off.
#
# The NICs may still be coming back from the namespaces of the tests before.
source "$(dirname "$0")"/topology.sh
topo_teardown || exit 1
exec "$(dirname "$0")"/bind_rx
