// The level units registry.cpp registers: one function per unit, returning
// its one LevelLayout.
#pragma once
#include "engine/geometry.h"
#include "engine/levels/level.h"

namespace gpuraid {

const LevelLayout& raid0_level();
const LevelLayout& raid1_level();
const LevelLayout& raid10_level();
const LevelLayout& raid5_level();
const LevelLayout& raid6_level();
const LevelLayout& ec_level();
const LevelLayout& raid50_level();
const LevelLayout& raid60_level();
const LevelLayout& draid5_level();
const LevelLayout& draid6_level();

}  // namespace gpuraid
