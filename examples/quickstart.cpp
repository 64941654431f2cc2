// The quickstart: one backend-generic function (showcase.hpp), instantiated here for the cpu;
// quickstart.cu instantiates the same body for cuda.
#include <fusor/fusor.hpp>

#include <iostream>

#include "showcase.hpp"

using namespace fusor;

int main() {
  quickstart::showcase<cpu>(42);
  array<double> m{{1, 2, 3}, {4, 5, 6}};
  std::cout << "m =\n" << m << "\nsum over rows: " << sum(m, 0) << ", argmax per row: " << argmax(m, 1) << "\n";
}
