#pragma once
// (the backend header the leaky core header includes)
